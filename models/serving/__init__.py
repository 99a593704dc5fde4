"""Serving: throughput per GPU against tokens/s per user as concurrency grows, for a model, a
precision, a cluster and a request shape; and what a million tokens costs at a target
interactivity. Pure functions; pipelines/jobs/serving.py resolves the inputs."""

from models.serving.curve import CurvePoint, serving_curve
from models.serving.spec import Deployment, RequestShape, ServingLLM, WeightFormat

__all__ = ["CurvePoint", "Deployment", "RequestShape", "ServingLLM", "WeightFormat",
           "serving_curve"]
