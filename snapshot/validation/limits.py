"""The size limits of the ``resource.k8s.io`` API in Kubernetes 1.36: the one home of each number.

Each constant is upstream's of the same name in ``k8s.io/api/resource/v1/types.go`` (tag
``v0.36.0``), or in ``pkg/apis/resource/types.go`` where the v1 package has none. The API
server's rules (:mod:`snapshot.validation.slices`, :mod:`snapshot.validation.claims`) and the
allocator (``snapshot.allocation.requests``: at most ``ALLOCATION_RESULTS_MAX_SIZE`` devices
per claim) read them from here.
"""

from __future__ import annotations

from typing import Final

# ResourceSlice
RESOURCE_SLICE_MAX_DEVICES: Final = 128
#: When a device of the slice has taints, consumes counters or has a list-typed attribute.
RESOURCE_SLICE_MAX_DEVICES_WITH_ADVANCED_FEATURES: Final = 64
RESOURCE_SLICE_MAX_COUNTER_SETS: Final = 8
RESOURCE_SLICE_MAX_COUNTERS_PER_COUNTER_SET: Final = 32
RESOURCE_SLICE_MAX_DEVICE_COUNTER_CONSUMPTIONS_PER_DEVICE: Final = 2
RESOURCE_SLICE_MAX_COUNTERS_PER_DEVICE_COUNTER_CONSUMPTION: Final = 32
RESOURCE_SLICE_MAX_ATTRIBUTES_AND_CAPACITIES_PER_DEVICE: Final = 32
#: Attribute values of one device, each item of a list-typed attribute counting as one.
RESOURCE_SLICE_MAX_ATTRIBUTE_VALUES_PER_DEVICE: Final = 48
DEVICE_ATTRIBUTE_MAX_VALUE_LENGTH: Final = 64
DEVICE_TAINTS_MAX_LENGTH: Final = 16
BINDING_CONDITIONS_MAX_SIZE: Final = 4
BINDING_FAILURE_CONDITIONS_MAX_SIZE: Final = 4
#: ``pkg/apis/resource/types.go``: options of a capacity's ``requestPolicy.validValues``.
CAPACITY_REQUEST_POLICY_DISCRETE_MAX_OPTIONS: Final = 10

# ResourceClaim, ResourceClaimTemplate, DeviceClass
#: At most this many devices are allocated for one claim (the allocator's limit too).
ALLOCATION_RESULTS_MAX_SIZE: Final = 32
DEVICE_REQUESTS_MAX_SIZE: Final = ALLOCATION_RESULTS_MAX_SIZE
DEVICE_CONSTRAINTS_MAX_SIZE: Final = 32
DEVICE_CONFIG_MAX_SIZE: Final = 32
DEVICE_SELECTORS_MAX_SIZE: Final = 32
FIRST_AVAILABLE_DEVICE_REQUEST_MAX_SIZE: Final = 8
CEL_SELECTOR_EXPRESSION_MAX_LENGTH: Final = 10 * 1024
OPAQUE_PARAMETERS_MAX_LENGTH: Final = 10 * 1024
RESOURCE_CLAIM_RESERVED_FOR_MAX_SIZE: Final = 256
