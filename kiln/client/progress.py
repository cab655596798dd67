"""Showing an action's progress while ``--wait`` follows it, and its summary at the end.

On a terminal (stderr is a tty) a rich live display redraws in place: the action and the
elapsed time, counts of resources done / in progress / failed / waiting, the resources in
progress with how long each has run, and the latest failures. Anywhere else (a pipe, a
log, CI) each event is one plain line, as ``openstack stack create --wait`` prints them,
so logs stay readable. Both go to stderr: stdout is for the result. The summary at the end
says how the action ended, how long it took, and each failed resource with its reason.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.progress_bar import ProgressBar
from rich.spinner import Spinner
from rich.table import Table
from rich.text import Text

from kiln.client.api import JSON
from kiln.client.watch import ActionWatch, wait

_VERBS = {"CREATE": "Creating", "UPDATE": "Updating", "DELETE": "Deleting",
          "SUSPEND": "Suspending", "RESUME": "Resuming", "CHECK": "Checking",
          "SNAPSHOT": "Snapshotting", "RESTORE": "Restoring", "ADOPT": "Adopting",
          "ROLLBACK": "Rolling back"}
#: how many in-progress resources the live view lists before "... and N more"
_SHOWN = 8


def stderr_console() -> Console:
    return Console(file=sys.stderr, highlight=False)


def _duration(seconds: float) -> str:
    seconds = max(0.0, seconds)
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes}m{secs:02d}s"


def counts_line(watch: ActionWatch) -> Text:
    counts = watch.counts()
    text = Text()
    text.append(f"{counts['done']} done", style="green")
    text.append(" · ")
    text.append(f"{counts['in_progress']} in progress", style="yellow")
    text.append(" · ")
    text.append(f"{counts['failed']} failed", style="red" if counts["failed"] else "")
    if watch.expected:
        text.append(f" · {counts['waiting']} waiting", style="dim")
    return text


class LiveView:
    """The renderable a rich ``Live`` redraws on each refresh (elapsed time included)."""

    def __init__(self, watch: ActionWatch) -> None:
        self.watch = watch
        self.spinner = Spinner("dots")

    def __rich__(self) -> RenderableType:
        watch = self.watch
        verb = _VERBS.get(watch.action, watch.action.title())
        heading = Table.grid(padding=(0, 1))
        heading.add_row(self.spinner, Text(f"{verb} stack {watch.stack_name}", style="bold"),
                        Text(_duration(watch.elapsed), style="cyan"))
        counts = Table.grid(padding=(0, 1))
        total = len(watch.expected | set(watch.resources))
        if total:
            finished = sum(1 for p in watch.resources.values() if p.state != "in_progress")
            counts.add_row(" ", ProgressBar(total=total, completed=min(finished, total),
                                            width=24),
                           Text(f"{min(finished, total)}/{total}"), counts_line(watch))
        else:
            counts.add_row(" ", counts_line(watch))
        parts: list[RenderableType] = [heading, counts]
        running = [p for p in watch.resources.values() if p.state == "in_progress"]
        if running:
            table = Table.grid(padding=(0, 2))
            for progress in running[:_SHOWN]:
                started = progress.started or watch.started
                table.add_row("  ▸", progress.name, watch.types.get(progress.name, ""),
                              Text(progress.status, style="yellow"),
                              _duration(watch.elapsed - (started - watch.started)))
            parts.append(table)
            if len(running) > _SHOWN:
                parts.append(Text(f"    ... and {len(running) - _SHOWN} more", style="dim"))
        for progress in [p for p in watch.resources.values() if p.state == "failed"][-3:]:
            parts.append(Text(f"  ✗ {progress.name}: {progress.reason}", style="red"))
        return Group(*parts)


def event_line(event: JSON, stack_name: str, stack_id: str, path: str | None = None) -> str:
    """``<time> [<stack>.<resource>]: <STATUS>  <reason>``, the openstack CLI's line (a
    nested resource by its ``path`` from the top stack)."""
    name = str(event.get("resource_name") or "")
    is_stack = event.get("physical_resource_id") == stack_id and name == stack_name
    where = stack_name if is_stack else f"{stack_name}.{path or name}"
    return (f"{event.get('event_time', '')} [{where}]: {event.get('resource_status', '')}  "
            f"{event.get('resource_status_reason') or ''}")


def follow(watch: ActionWatch, console: Console | None = None) -> None:
    """Wait for the action, showing its progress, then print the summary."""
    console = console or stderr_console()
    if console.is_terminal:
        with Live(LiveView(watch), console=console, refresh_per_second=8, transient=True):
            wait(watch)
    else:
        def print_events(new: Sequence[JSON]) -> None:
            for event in new:
                if watch.is_nested(event) and event.get("physical_resource_id") == event.get(
                        "stack_id"):
                    continue   # a nested stack's own state: its parent resource says it
                console.print(event_line(event, watch.stack_name, watch.stack_id,
                                         watch.path(event)), markup=False, soft_wrap=True)
        wait(watch, print_events)
    summary(watch, console)


def summary(watch: ActionWatch, console: Console) -> None:
    """How it ended; when it did not succeed, each failure seen on the way, with its reason
    (also those a rollback has since cleaned up)."""
    final = watch.final or {}
    status = str(final.get("stack_status") or watch.stack_status)
    reason = str(final.get("stack_status_reason") or watch.stack_reason)
    counts = watch.counts()
    failed_names = {name for name, _, _ in watch.failures if name != watch.stack_name}
    failed = max(counts["failed"], len(failed_names))
    ok = watch.succeeded
    mark = Text("✓ " if ok else "✗ ", style="green" if ok else "red")
    line = mark + Text(f"Stack {watch.stack_name} ", style="bold") + Text(
        status, style="green" if ok else "red bold") + Text(
        f" in {_duration(watch.elapsed)}: {plural(counts['done'], 'resource')} done, "
        f"{failed} failed")
    console.print(line, soft_wrap=True)
    if ok:
        return
    resource_failures = [f for f in dict.fromkeys(watch.failures) if f[0] != watch.stack_name]
    # the stack's reason usually repeats a resource's ("Resource CREATE failed: <the
    # resource's reason>"): the resource's line below says it once, with its name
    said = [r for _, _, r in resource_failures if r]
    stack_failures = [r for name, s, r in watch.failures if name == watch.stack_name and r]
    for text in dict.fromkeys([*stack_failures, reason]):
        if text and not any(r in text for r in said):
            console.print(Text(f"  {text}", style="red"), soft_wrap=True)
    for name, failed_status, failed_reason in resource_failures:
        console.print(Text(f"  ✗ {name} {failed_status}: {failed_reason}", style="red"),
                      soft_wrap=True)


def plural(count: int, noun: str) -> str:
    """``1 resource``, ``2 resources``."""
    return f"{count} {noun}{'' if count == 1 else 's'}"
