"""The TP and EP sizes the engines refuse for a model, as pure rules."""

from __future__ import annotations

from models.parallel_limits import Refusal, serving_refusals, training_refusals


def test_training_refuses_a_tp_that_does_not_divide_the_heads_or_the_kv_heads():
    assert training_refusals(3, None, heads=64, kv_heads=8, experts=1) == [
        Refusal("tp", "tp=3 does not divide the 64 attention heads")]
    assert training_refusals(16, None, heads=64, kv_heads=8, experts=1) == [
        Refusal("tp", "tp=16 does not divide the 8 KV heads")]
    assert training_refusals(8, None, heads=64, kv_heads=8, experts=1) == []


def test_training_refuses_an_ep_that_does_not_divide_the_experts():
    assert training_refusals(None, 256, heads=64, kv_heads=8, experts=128) == [
        Refusal("ep", "ep=256 does not divide the 128 experts")]
    assert training_refusals(None, 3, heads=64, kv_heads=8, experts=128)[0].key == "ep"
    assert training_refusals(None, 32, heads=64, kv_heads=8, experts=128) == []
    assert "dense model" in training_refusals(None, 2, 64, 8, experts=1)[0].reason


def test_serving_replicates_kv_heads_and_spreads_experts_unevenly():
    # vLLM: TP 16 over 8 KV heads replicates each twice; TP 3 over 8 does neither.
    assert serving_refusals(16, 1, heads=64, kv_heads=8, latent_kv=False, experts=0) == []
    assert serving_refusals(4, 1, heads=64, kv_heads=6, latent_kv=False, experts=0)[0].key == "tp"
    assert serving_refusals(4, 1, heads=64, kv_heads=6, latent_kv=True, experts=0) == []
    # 256 experts over 72 GPUs: 3 or 4 each (the shipped DeepSeek-R1 option); 256 over 128: none.
    assert serving_refusals(1, 72, heads=128, kv_heads=128, latent_kv=True, experts=256) == []
    assert serving_refusals(1, 256, heads=64, kv_heads=8, latent_kv=False, experts=128) == [
        Refusal("ep", "ep=256 is more than the 128 experts: 128 GPUs would hold none")]
    assert serving_refusals(3, 1, heads=64, kv_heads=8, latent_kv=False, experts=0) == [
        Refusal("tp", "tp=3 does not divide the 64 attention heads")]
