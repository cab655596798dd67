"""How many processes each role runs (kiln.workers), from Heat's options and Heat's
rules for them; the forking itself is tested with real processes in
tests/integration/test_workers.py."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from kiln.conf import CONF
from kiln.conf_loader import ConfigError, load_config
from kiln.workers import check, process_count

CPUS = os.cpu_count() or 1
BROKER = "[DEFAULT]\ntransport_url = rabbit://guest:guest@127.0.0.1:5672/\n"


@pytest.fixture(autouse=True)
def _restore_conf() -> Iterator[None]:
    yield
    CONF.clear()


def conf_of(tmp_path: Path, text: str) -> object:
    path = tmp_path / "kiln.conf"
    path.write_text(text)
    return load_config([str(path)])


def test_one_process_of_each_kind_by_default(tmp_path: Path) -> None:
    # kiln serve stays one process unless asked (Heat's heat-api default was 0: per CPU)
    conf = conf_of(tmp_path, "")
    for role in ("all", "api", "api-cfn", "api-cloudwatch", "engine"):
        assert process_count(conf, role) == 1, role


def test_workers_zero_is_one_per_cpu_as_in_heat(tmp_path: Path) -> None:
    conf = conf_of(tmp_path, BROKER + "[heat_api]\nworkers = 0\n[heat_api_cfn]\nworkers = 3\n"
                   "[heat_api_cloudwatch]\nworkers = 0\n")
    assert process_count(conf, "api") == CPUS
    assert process_count(conf, "all") == CPUS
    assert process_count(conf, "api-cfn") == 3
    assert process_count(conf, "api-cloudwatch") == CPUS


def test_num_engine_workers(tmp_path: Path) -> None:
    assert process_count(conf_of(tmp_path, "[DEFAULT]\nnum_engine_workers = 3\n"),
                         "engine") == 3
    CONF.clear()
    # unset with a broker: Heat's max(4, CPUs)
    assert process_count(conf_of(tmp_path, BROKER), "engine") == max(4, CPUS)


def test_negative_counts_are_configuration_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="workers"):
        conf_of(tmp_path, "[heat_api]\nworkers = -1\n")


def test_several_api_processes_need_a_broker(tmp_path: Path) -> None:
    conf = conf_of(tmp_path, "[heat_api_cfn]\nworkers = 2\n")
    with pytest.raises(ConfigError, match=r"\[heat_api_cfn\] workers = 2 \(2 processes\) "
                                          r"needs \[DEFAULT\] transport_url"):
        check(conf, "api-cfn", 2)
    check(conf, "engine", 2)  # engines take no request: several are always allowed
    CONF.clear()
    check(conf_of(tmp_path, BROKER + "[heat_api]\nworkers = 2\n"), "api", 2)


def test_oslo_messagings_default_url_is_no_broker(tmp_path: Path) -> None:
    # a notifications section registers transport_url with oslo.messaging's default
    # (rabbit://), which nobody chose: still no broker
    conf = conf_of(tmp_path, "[oslo_messaging_notifications]\ndriver = noop\n"
                             "[heat_api]\nworkers = 2\n")
    with pytest.raises(ConfigError, match="needs"):
        check(conf, "api", 2)
    CONF.clear()
    assert process_count(conf_of(tmp_path, "[oslo_messaging_notifications]\n"
                                           "driver = noop\n"), "engine") == 1


def test_the_example_of_deployment_workers_md_loads(tmp_path: Path) -> None:
    import re

    from tests.support import docs

    (example,) = re.findall(r"```ini\n(.*?)```", docs.page("deployment-workers.md"), re.S)
    conf = conf_of(tmp_path, example)
    assert process_count(conf, "api") == 4
    assert process_count(conf, "engine") == 4
    check(conf, "api", 4)  # a broker is set: several API processes are allowed


def test_the_three_controller_example_of_deployment_md_loads(tmp_path: Path) -> None:
    """docs/deployment.md's heat.conf, as an operator pastes it: it loads, and it names a
    broker, so each controller's `kiln api` hands its actions to the engines."""
    import re

    from kiln.rpc.transport import chosen_url, target
    from tests.support import docs

    (example,) = re.findall(r"```ini\n(.*?)```",
                            docs.section(docs.page("deployment.md"), "Topology"), re.S)
    conf = conf_of(tmp_path, example.replace("<the same 32+ characters on every "
                                             "controller>", "k" * 32))
    assert chosen_url(conf) == "rabbit://kiln:secret@rabbit:5672/"
    assert conf.host == "controller1"
    assert conf.kiln_engine.rpc_topic == "kiln-engine"
    assert target(conf).topic == "kiln-engine"
    assert target(conf).exchange == "heat"
    check(conf, "api", 2)  # several API processes are allowed with a broker
    # signal URLs name the balancer, whichever engine makes them
    from kiln.endpoints import heat_project_root
    assert heat_project_root(conf, "p1") == "http://kiln.example.com:8004/v1/p1"
