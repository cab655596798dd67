"""The broker as oslo.messaging reads it: ``[DEFAULT] transport_url`` and
``control_exchange``, ``[oslo_messaging_rabbit]`` (heartbeats, quorum queues, TLS),
``rpc_response_timeout``; and Kiln's one topic.

The topic is ``[kiln_engine] rpc_topic`` (``kiln-engine``), not Heat's ``engine``: a
real Heat on the same broker and exchange never receives Kiln's messages, nor Kiln
Heat's.
"""

from __future__ import annotations

import contextlib
import importlib
import warnings
from typing import Any

from oslo_config import cfg

from kiln.oslo_notifier import _oslo_messaging

#: the default of ``[kiln_engine] rpc_topic``
TOPIC = "kiln-engine"
#: the RPC interface's version (oslo.messaging's target version)
VERSION = "1.0"


def chosen_url(conf: cfg.ConfigOpts) -> str | None:
    """``[DEFAULT] transport_url`` when a config file (or an override) sets it. The option
    exists only once a file sets a messaging option (kiln.oslo_notifier), and
    oslo.messaging's default (``rabbit://``) is not a broker the operator chose: Kiln
    without one dispatches in its own process. The one test of "is there a broker" for
    the process count (kiln.workers) and the dispatch (kiln.rpc.wiring) alike."""
    try:
        value = conf.transport_url
        where = conf.get_location("transport_url")
    except (cfg.NoSuchOptError, AttributeError):
        return None
    if not value or (where is not None and where.location in (
            cfg.Locations.opt_default, cfg.Locations.set_default)):
        return None
    return str(value)


def configured(conf: cfg.ConfigOpts) -> bool:
    """Whether this process talks to engines over a broker (``transport_url`` chosen)."""
    return chosen_url(conf) is not None


def rpc_transport(conf: cfg.ConfigOpts) -> Any:
    """oslo.messaging's RPC transport on ``transport_url``; it registers and reads its
    own driver options (``[oslo_messaging_rabbit]``) on ``conf``."""
    om = _oslo_messaging()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from oslo_messaging import opts

        register_all(conf, opts.list_opts())
        # registered by oslo.messaging on its global CONF only, yet read from ours on
        # every send
        for module, group in (("oslo_messaging._tracing.client", "oslo_messaging_tracing"),
                              ("oslo_messaging._metrics.client", "oslo_messaging_metrics")):
            try:
                found = importlib.import_module(module)
            except ImportError:  # another oslo.messaging version
                continue
            register_all(conf, [(group, getattr(found, group, []))])
        return om.get_rpc_transport(conf)


def register_all(conf: cfg.ConfigOpts, groups: Any) -> None:
    """Every option oslo.messaging reads while sending (``[oslo_messaging_tracing]``,
    ...), as oslo.messaging declares them; those already registered are kept."""
    for group, group_opts in groups:
        for opt in group_opts:
            with contextlib.suppress(cfg.DuplicateOptError):
                conf.register_opt(opt, group=group)


def target(conf: cfg.ConfigOpts, server: str | None = None) -> Any:
    """The topic on ``control_exchange``; one engine's own queue with ``server``."""
    om = _oslo_messaging()
    return om.Target(exchange=conf.control_exchange, topic=conf.kiln_engine.rpc_topic,
                     server=server, version=VERSION)
