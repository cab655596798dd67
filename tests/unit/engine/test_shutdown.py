"""A stopping engine hands unfinished work over instead of failing it."""

from __future__ import annotations

from kiln.engine.service import EngineService, RequestContext

from .support import hot


async def test_stop_leaves_work_resumable_and_the_next_engine_finishes_it(
        sqlite_url: str, ctx: RequestContext, override) -> None:  # type: ignore[no-untyped-def]
    override(poll_initial_delay=0.001, poll_max_delay=0.05, group="kiln_engine")
    override(graceful_shutdown_timeout=1)
    template = hot({"slow": {"type": "OS::Heat::TestResource",
                             "properties": {"action_wait_secs": {"create": 2}}}})
    first = EngineService(db_url=sqlite_url)
    await first.start()
    ident = await first.create_stack(ctx, "handoff", template, {}, {}, {})
    await first.stop()  # the create needs 2 s; the engine gives it 1 s

    second = EngineService(db_url=sqlite_url)
    await second.start()
    try:
        mid = await second.describe_stack_resource(ctx, ident, "slow")
        # nothing was failed by the shutdown
        assert mid["resource_status"] in ("CREATE_IN_PROGRESS", "CREATE_COMPLETE")
        physical = mid["physical_resource_id"]
        # start() swept the stack up and resumed it as one of its own actions
        await second.wait_for_stack(ident["stack_id"], timeout=30)
        shown = await second.show_stack(ctx, ident)
        assert shown["stack_status"] == "CREATE_COMPLETE", shown["stack_status_reason"]
        done = await second.describe_stack_resource(ctx, ident, "slow")
        assert done["physical_resource_id"] == physical  # continued, not made again
    finally:
        await second.stop()
