"""``drasnap capture``: a live cluster's objects as a folder ``--from`` reads."""

from __future__ import annotations

import click
from drasnap.tools.errors import CommandError
from drasnap.tools.options import (
    cluster_options,
    json_option,
    output_dir,
    output_dir_option,
    page_size_option,
    redact_option,
)
from drasnap.tools.output import echo_json
from drasnap.tools.progress import ObjectCounts


@click.command(name="capture")
@cluster_options("Capture")
@output_dir_option
@page_size_option("Objects per list request (limit/continue paging).")
@redact_option
@json_option
def capture_cmd(
    kubeconfig: str | None,
    context: str | None,
    namespaces: tuple[str, ...],
    output: str,
    page_size: int,
    redact: bool,
    as_json: bool,
) -> None:
    """Capture a live cluster's DRA objects, nodes, pods and workloads into DIR, as kubectl
    List files that `drasnap simulate ... --from DIR` reads.

    Lists (get/list/watch only: it never writes to the cluster) DeviceClasses,
    ResourceSlices, DeviceTaintRules, Nodes, ResourceClaimTemplates, ResourceClaims, Pods,
    Deployments, ReplicaSets, StatefulSets, Jobs and the priority expander's ConfigMap, in
    pages; resource.k8s.io in the newest version the server serves, older ones converted to
    v1. DIR/.drasnap-capture.json records each kind's resourceVersion and the kinds that
    changed while the capture ran (a capture is not one atomic snapshot).

    Example:

        drasnap capture --context prod -o prod-dump && drasnap simulate autoscale --from prod-dump
    """
    from drasnap.snapshot import (
        PRIORITY_FILE,
        ForbiddenError,
        Redactor,
        capture,
        connect,
        manifest_of,
        write_capture,
    )

    target, table_path = output_dir(output, redact)
    client, server = connect(kubeconfig, context)
    progress = ObjectCounts.on_terminal(as_json)
    try:
        result = capture(
            client,
            namespaces=namespaces,
            page_size=page_size,
            progress=progress,
        )
    except ForbiddenError as exc:
        if progress:
            progress.close()
        click.echo(exc.cluster_role, err=True, nl=False)
        raise CommandError(str(exc)) from None
    if progress:
        progress.close()
    manifest = manifest_of(result, server=server, context=context or "")
    redactor = Redactor() if redact else None
    if redactor is not None:
        manifest["redacted"] = True
        manifest["server"] = ""
        manifest["context"] = ""
        manifest["namespaces"] = (
            [redactor.name("namespace", n) for n in namespaces] if namespaces else "all"
        )
        manifest["notes"] = []  # they name objects
    write_capture(
        result, target, manifest=manifest, transform=redactor.redact if redactor else None
    )
    if redactor is not None:
        redactor.write_table(table_path)
    for note in result.notes:
        click.echo(f"note: {note}", err=True)
    for warning in redactor.warnings if redactor else ():
        click.echo(f"warning: {warning}", err=True)
    if (target / PRIORITY_FILE).exists():
        click.echo(
            f"note: the priority expander's ConfigMap is {target / PRIORITY_FILE}: give "
            f"--expander priority --expander-priorities {target / PRIORITY_FILE} to use it",
            err=True,
        )
    if result.changed:
        click.echo(
            f"warning: changed while the capture ran: {', '.join(result.changed)} (a capture "
            "is not one atomic snapshot; capture again for a quieter moment)",
            err=True,
        )
    if as_json:
        echo_json(
            {
                "output": str(target),
                "kinds": manifest["kinds"],
                "changed_during_capture": result.changed,
                "objects": sum(len(k.objects) for k in result.kinds),
                "redaction_table": str(table_path) if redactor else None,
                "notes": manifest["notes"],
            }
        )
        return
    for listed in result.kinds:
        click.echo(
            f"{listed.kind.kind:<22} {len(listed.objects):>7} objects  {listed.api_version:<22}"
            f" resourceVersion {listed.resource_version}"
        )
    click.echo(f"wrote {target}" + (f" (translation table: {table_path})" if redactor else ""))
