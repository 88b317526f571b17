"""The API server a capture talks to: a kubeconfig (its context), or in a pod the service
account (the kubernetes client's in-cluster config)."""

from __future__ import annotations

import os
from typing import Any

from drasnap.snapshot.errors import CaptureError, one_line
from drasnap.snapshot.live.capture import RawClient

__all__ = ["connect"]


def connect(kubeconfig: str | None = None, context: str | None = None) -> tuple[RawClient, str]:
    """A :class:`RawClient` and the server's URL. Without ``kubeconfig``: ``$KUBECONFIG`` or
    ``~/.kube/config``; in a pod with neither, the in-cluster service account."""
    from kubernetes import client
    from kubernetes import config as kube_config
    from kubernetes.config.config_exception import ConfigException

    config: Any = kube_config  # (untyped)
    configuration: Any = client.Configuration()
    default = os.environ.get("KUBECONFIG") or os.path.expanduser("~/.kube/config")
    if kubeconfig is not None and not os.path.isfile(kubeconfig):
        # (The client would say "No configuration found", naming no file.)
        why = "is not a file" if os.path.exists(kubeconfig) else "does not exist"
        raise CaptureError(f"the kubeconfig {kubeconfig} {why}: give --kubeconfig FILE")
    try:
        if (
            kubeconfig is None
            and context is None
            and not os.path.exists(default.split(os.pathsep)[0])
            and os.environ.get("KUBERNETES_SERVICE_HOST")
        ):
            config.load_incluster_config(client_configuration=configuration)
        else:
            config.load_kube_config(
                config_file=kubeconfig, context=context, client_configuration=configuration
            )
    except ConfigException as exc:
        raise CaptureError(
            f"cannot load the kubeconfig {kubeconfig or default}: {one_line(exc)}"
        ) from None
    except OSError as exc:
        raise CaptureError(f"cannot read the kubeconfig {kubeconfig or default}: {exc}") from None
    configuration.retries = 0
    configuration.connection_pool_maxsize = 32  # record watches every kind at once
    return RawClient(client.ApiClient(configuration)), str(configuration.host)
