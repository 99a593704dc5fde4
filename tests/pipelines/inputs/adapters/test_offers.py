"""An offer's item key is the slug of its provider, instance type, region and term."""

import pytest

from pipelines.inputs.adapters.base import slug
from pipelines.inputs.adapters.instances import InstanceSpec
from pipelines.inputs.adapters.offers import Offer


@pytest.mark.parametrize(("instance", "region", "term"), [
    ("Standard_ND96isr_H100_v5", "eastus", "on_demand"),
    ("p5.48xlarge", "us-east-1", "reserved_3y"),
    ("gpu_8x_h100_sxm5", "  us-west-1 ", "spot"),
    ("__", "--", "on_demand"),  # a part with nothing to keep
    ("Straße_GPU-", "-Île-de-France", "spot"),  # casefolding, gaps at the parts' ends
    ("a", "", "on_demand"),
])
def test_the_item_key_is_the_slug_of_the_whole(instance, region, term):
    spec = InstanceSpec(provider="azure", instance_type=instance, gpu="h100-sxm5", gpus=8,
                        source="test")
    offer = Offer(provider="azure", region=region, term=term, instance=spec, price=1,
                  price_written="1", currency="USD", unit_written="1 Hour")
    assert offer.item_key == slug(f"azure-{instance}-{region}-{term}")
