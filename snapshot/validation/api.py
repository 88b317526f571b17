"""Everything the API server of Kubernetes 1.36 checks on one object, in one pass.

The structure of each kind (:mod:`~snapshot.validation.slices`,
:mod:`~snapshot.validation.claims`, :mod:`~snapshot.validation.core`), then its names
(:mod:`~snapshot.validation.names`), are collected into one :class:`Checker`; the first problem
is raised with the paths of up to three more. ``docs/validation.md`` lists every rule of
``pkg/apis/resource/validation`` and whether drasnap checks it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from drasnap.snapshot.k8s.kinds import (
    CLAIM_KIND,
    CLAIM_TEMPLATE_KIND,
    CLASS_KIND,
    POD_KIND,
    SLICE_KIND,
)
from drasnap.snapshot.validation.claims import check_claim, check_device_class, check_template
from drasnap.snapshot.validation.context import Context
from drasnap.snapshot.validation.core import check_pod
from drasnap.snapshot.validation.names import collect_names
from drasnap.snapshot.validation.problems import Checker, raise_first
from drasnap.snapshot.validation.slices import check_slice

__all__ = ["check_api"]

_STRUCTURE: Final[Mapping[str, Callable[[Checker, Mapping[str, Any]], None]]] = {
    SLICE_KIND: check_slice,
    CLAIM_KIND: check_claim,
    CLAIM_TEMPLATE_KIND: check_template,
    CLASS_KIND: check_device_class,
    POD_KIND: check_pod,
}


def check_api(obj: Mapping[str, Any], ctx: Context) -> None:
    """Refuse ``obj`` (a wire object in v1 shape, defaults applied) as the API server would.

    Raises:
        ObjectValidationError: the first problem, its path shown through ``ctx``, with the
            paths of up to three more.
    """
    c = Checker()
    structure = _STRUCTURE.get(str(obj.get("kind")))
    if structure is not None:
        structure(c, obj)
    collect_names(c, obj)
    raise_first(c, ctx)
