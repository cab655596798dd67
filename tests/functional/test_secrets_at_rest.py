"""Secrets at rest, through a real ``kiln serve`` (docs/security.md, "Secrets at rest").

Stacks holding every kind of secret Kiln hands out (a hidden parameter, a RandomString,
an EC2 secret key, temp-URL and pre-signed URL signatures, a signal token, a server's
password, an alarm's signed action) are created with real clients; then the SQLite file
is opened directly and every column of every table is searched for them, while the API
still answers with the right values. Also: the key Kiln generates when none is
configured, Heat's sample key refused in an authenticating mode, and
``kiln db update-params`` moving a database to a new key, after which a server started on
the new key reads everything.
"""

from __future__ import annotations

import json
import re
import sqlite3
import stat
import subprocess
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from cryptography.fernet import InvalidToken

from kiln.db import crypt
from tests.support.aws import Keypair, cfn_client, issue_keypair
from tests.support.clients import heat_client, wait_for_stack_status
from tests.support.server import (
    KilnProcess,
    clean_env,
    kiln_command,
    start_kiln,
    write_config,
)

PASSWORD = "Hidden-Pa55word-7c1e"

SECRETS_TEMPLATE = """heat_template_version: 2018-08-31
parameters:
  pw: {type: string, hidden: true}
resources:
  rs: {type: OS::Heat::RandomString, properties: {length: 40}}
  tr: {type: OS::Heat::TestResource, properties: {value: {get_param: pw}}}
  val: {type: OS::Heat::Value, properties: {value: {get_param: pw}}}
  user: {type: AWS::IAM::User}
  key:
    type: AWS::IAM::AccessKey
    properties: {UserName: {get_resource: user}}
  wch: {type: OS::Heat::WaitConditionHandle}
  cfnh: {type: AWS::CloudFormation::WaitConditionHandle}
  srv:
    type: OS::Heat::DeployedServer
    properties: {software_config_transport: POLL_TEMP_URL}
  group:
    type: OS::Heat::AutoScalingGroup
    properties:
      min_size: 1
      max_size: 2
      resource: {type: OS::Heat::Value, properties: {value: member}}
  up:
    type: OS::Heat::ScalingPolicy
    properties:
      auto_scaling_group_id: {get_resource: group}
      adjustment_type: change_in_capacity
      scaling_adjustment: 1
  alarm:
    type: AWS::CloudWatch::Alarm
    properties:
      Namespace: test/secrets
      MetricName: cpu
      Statistic: Average
      Period: '60'
      EvaluationPeriods: '1'
      Threshold: '80'
      ComparisonOperator: GreaterThanThreshold
      AlarmActions: [{get_attr: [up, alarm_url]}]
outputs:
  rs: {value: {get_attr: [rs, value]}}
  secret_key: {value: {get_attr: [key, SecretAccessKey]}}
  occ: {value: {get_attr: [srv, os_collect_config]}}
  wch_token: {value: {get_attr: [wch, token]}}
  cfn_url: {value: {get_resource: cfnh}}
  alarm_url: {value: {get_attr: [up, alarm_url]}}
  pw: {value: {get_param: pw}}
  stored: {value: {get_attr: [tr, output]}}
"""

#: a server whose deployment waits for its TEMP_URL_SIGNAL; its metadata carries the
#: deployment's signed URL and, with POLL_SERVER_HEAT, the server's password
DEPLOYMENT_TEMPLATE = """heat_template_version: 2018-08-31
resources:
  srv:
    type: OS::Heat::DeployedServer
    properties: {software_config_transport: POLL_SERVER_HEAT}
  config:
    type: OS::Heat::SoftwareConfig
    properties: {group: script, config: "echo hi"}
  dep:
    type: OS::Heat::SoftwareDeployment
    properties:
      config: {get_resource: config}
      server: {get_resource: srv}
      signal_transport: TEMP_URL_SIGNAL
outputs:
  occ: {value: {get_attr: [srv, os_collect_config]}}
"""


def _outputs(heat: Any, stack_id: str) -> dict[str, Any]:
    return {o["output_key"]: o["output_value"] for o in heat.stacks.get(stack_id).outputs}


def _database_values(path: Path) -> list[tuple[str, str, str]]:
    """(table, column, text) for every non-NULL value of every table of the file."""
    found = []
    db = sqlite3.connect(path)
    try:
        tables = [t for (t,) in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        for table in tables:
            cursor = db.execute(f'SELECT * FROM "{table}"')
            names = [d[0] for d in cursor.description]
            for row in cursor:
                found += [(table, name, str(value))
                          for name, value in zip(names, row, strict=True) if value is not None]
    finally:
        db.close()
    return found


def _leaks(path: Path, secrets: dict[str, str]) -> list[str]:
    return sorted({f"{what} in {table}.{column}"
                   for table, column, text in _database_values(path)
                   for what, secret in secrets.items()
                   if secret in text or secret in unquote(text)})


def _signatures(text: str) -> list[str]:
    return (re.findall(r"temp_url_sig=([0-9a-f]{32,})", text)
            + [unquote(s) for s in re.findall(r"Signature=([^&\"']+)", text)])


def _create_secret_stacks(kiln: KilnProcess) -> tuple[Any, str, dict[str, str], Keypair]:
    """The stacks, a snapshot, a keypair; returns the client, the first stack's id,
    {what: secret} for everything secret they hold and the keypair."""
    heat = heat_client(kiln.endpoint("demo"))
    made = heat.stacks.create(stack_name="secrets", template=SECRETS_TEMPLATE,
                              parameters={"pw": PASSWORD})
    stack_id = made["stack"]["id"]
    assert wait_for_stack_status(heat, stack_id).stack_status == "CREATE_COMPLETE"
    outputs = _outputs(heat, stack_id)
    snapshot = heat.stacks.snapshot(stack_id, "snap")
    wait = wait_for_snapshot(heat, stack_id, snapshot["id"])
    assert wait["status"] == "COMPLETE", wait
    second = heat.stacks.create(stack_name="deploying", template=DEPLOYMENT_TEMPLATE)
    metadata = wait_for_metadata(heat, second["stack"]["id"])
    occ = heat.stacks.get(second["stack"]["id"]).outputs
    keypair = issue_keypair(kiln, "demo")
    secrets = {"hidden parameter": PASSWORD, "RandomString": outputs["rs"],
               "EC2 secret key": outputs["secret_key"], "signal token": outputs["wch_token"],
               "issued EC2 secret": keypair.secret,
               "server password": json.loads(json.dumps(occ))[0]["output_value"]["heat"]
               ["password"]}
    signed = json.dumps(outputs) + json.dumps(metadata)
    for i, sig in enumerate(_signatures(signed)):
        secrets[f"signature {i}"] = sig
    # the stack's own temp URL, its deployment's, the wait handle's and the alarm URL's
    assert len(secrets) >= 6 + 4, secrets
    return heat, stack_id, secrets, keypair


def wait_for_snapshot(heat: Any, stack_id: str, snapshot_id: str) -> Any:
    from tests.functional.agents.deploying import wait_for
    return wait_for(lambda: heat.stacks.snapshot_show(stack_id, snapshot_id)["snapshot"],
                    lambda s: s["status"] != "IN_PROGRESS", "the snapshot")


def wait_for_metadata(heat: Any, stack_id: str) -> Any:
    """The server's metadata once its deployment is in it."""
    from tests.functional.agents.deploying import wait_for
    return wait_for(lambda: heat.resources.metadata(stack_id, "srv"),
                    lambda m: bool((m or {}).get("deployments")), "the deployment metadata")


def test_no_secret_is_stored_in_plain_text_yet_the_api_returns_them(tmp_path: Path) -> None:
    kiln = start_kiln(tmp_path, options={"DEFAULT": {"graceful_shutdown_timeout": 1}})
    try:
        heat, stack_id, secrets, _ = _create_secret_stacks(kiln)
        assert _leaks(tmp_path / "state" / "kiln.sqlite", secrets) == []
        # the API still reads every one back, decrypted
        outputs = _outputs(heat, stack_id)
        assert outputs["pw"] == outputs["stored"] == PASSWORD
        assert outputs["rs"] == secrets["RandomString"]
        snaps = heat.stacks.snapshot_list(stack_id)["snapshots"]
        data = json.dumps(heat.stacks.snapshot_show(stack_id, snaps[0]["id"])["snapshot"])
        assert secrets["RandomString"] in data and PASSWORD in data
    finally:
        kiln.stop()


def test_events_mask_hidden_values_on_both_apis(tmp_path: Path) -> None:
    kiln = start_kiln(tmp_path)
    try:
        heat = heat_client(kiln.endpoint("demo"))
        template = {"heat_template_version": "2018-08-31",
                    "parameters": {"pw": {"type": "string", "hidden": True}},
                    "resources": {"tr": {"type": "OS::Heat::TestResource", "properties": {
                        "value": {"str_replace": {"template": "user:PW", "params": {
                            "PW": {"get_param": "pw"}}}}}}}}
        made = heat.stacks.create(stack_name="masked", template=template,
                                  parameters={"pw": PASSWORD})
        assert wait_for_stack_status(heat, made["stack"]["id"]).stack_status == \
            "CREATE_COMPLETE"
        cfn = cfn_client(kiln, issue_keypair(kiln, "demo"))
        events = cfn.describe_stack_events(StackName="masked")["StackEvents"]
        shown = [json.loads(e["ResourceProperties"]) for e in events
                 if e["LogicalResourceId"] == "tr" and e["ResourceProperties"] != "null"]
        assert shown and all(p["value"] == "user:******" for p in shown), shown
        native = [shown for shown in (
            heat.events.get(made["stack"]["id"], "tr", e.id).to_dict()
            for e in heat.events.list(made["stack"]["id"], resource_name="tr"))
            if shown.get("resource_properties")]
        assert native and all(e["resource_properties"]["value"] == "user:******"
                              for e in native), native
        assert PASSWORD not in json.dumps(events, default=str) + json.dumps(native)
    finally:
        kiln.stop()


RANDOM_TEMPLATE = """heat_template_version: 2018-08-31
resources:
  rs: {type: OS::Heat::RandomString}
outputs:
  rs: {value: {get_attr: [rs, value]}}
"""


def test_a_key_is_generated_once_and_kept(tmp_path: Path) -> None:
    kiln = start_kiln(tmp_path)
    key_file = tmp_path / "state" / "auth_encryption_key"
    try:
        heat = heat_client(kiln.endpoint("demo"))
        made = heat.stacks.create(stack_name="k", template=RANDOM_TEMPLATE)
        wait_for_stack_status(heat, made["stack"]["id"])
        value = _outputs(heat, made["stack"]["id"])["rs"]
    finally:
        kiln.stop()
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    key = key_file.read_text().strip()
    assert len(key) == 64 and key != crypt.LEGACY_DEFAULT_KEY
    assert any("generated auth_encryption_key" in r.get("message", "")
               for r in kiln.log_records())
    again = start_kiln(tmp_path)
    try:
        heat = heat_client(again.endpoint("demo"))
        assert _outputs(heat, made["stack"]["id"])["rs"] == value
    finally:
        again.stop()
    assert key_file.read_text().strip() == key


def test_an_authenticating_mode_refuses_heats_sample_key(tmp_path: Path) -> None:
    kiln = start_kiln(tmp_path, wait=False, options={
        "paste_deploy": {"flavor": "keystone"},
        "DEFAULT": {"auth_encryption_key": crypt.LEGACY_DEFAULT_KEY}})
    status = kiln.proc.wait(timeout=60)
    kiln.stop()
    lines = [line for line in kiln.logs().splitlines() if line.strip()]
    assert status == 2, kiln.logs()
    assert lines[-1].startswith("kiln: error: auth_encryption_key is Heat's public sample "
                                "value: set [DEFAULT] auth_encryption_key"), lines


def test_noauth_mode_warns_once_about_heats_sample_key(tmp_path: Path) -> None:
    kiln = start_kiln(tmp_path, options={
        "DEFAULT": {"auth_encryption_key": crypt.LEGACY_DEFAULT_KEY}})
    kiln.stop()
    warnings = [r for r in kiln.log_records()
                if "public sample value" in r.get("message", "")]
    assert len(warnings) == 1 and warnings[0]["level"] == "WARNING", warnings
    assert not (tmp_path / "state" / "auth_encryption_key").exists()


KEY_A = "operator-key-A-0f3b9c2d4e5f60718293"
KEY_B = "operator-key-B-a1b2c3d4e5f60718293f"


def _tokens(path: Path) -> list[str]:
    found = []
    for _, _, text in _database_values(path):
        found += re.findall(r"fernet1:([A-Za-z0-9_\-=]+)", text)
    return found


def _opens(key: str, token: str) -> bool:
    try:
        crypt._fernet(key).decrypt(token.encode())
    except InvalidToken:
        return False
    return True


def _kiln_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*kiln_command(), *args], capture_output=True, text=True,
                          env=clean_env(), cwd=cwd, timeout=120, check=False)


def test_update_params_moves_every_secret_to_a_new_key(tmp_path: Path) -> None:
    database = tmp_path / "state" / "kiln.sqlite"
    first = start_kiln(tmp_path, options={"DEFAULT": {"auth_encryption_key": KEY_A,
                                                      "graceful_shutdown_timeout": 1}})
    try:
        heat, stack_id, secrets, keypair = _create_secret_stacks(first)
        before = _outputs(heat, stack_id)
    finally:
        first.stop()
    tokens = _tokens(database)
    assert tokens and all(_opens(KEY_A, t) for t in tokens)

    conf_b = write_config(tmp_path / "kiln-b.conf", {"DEFAULT": {
        "state_path": tmp_path / "state", "auth_encryption_key": KEY_B}})
    refused = _kiln_cli("db", "update-params", "--config-file", str(conf_b), cwd=tmp_path)
    assert refused.returncode == 1 and "nothing was changed" in refused.stderr, refused
    assert _tokens(database) == tokens

    done = _kiln_cli("db", "update-params", "--config-file", str(conf_b),
                     "--previous-encryption-key", KEY_A, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "stack.outputs: 2 re-encrypted" in done.stdout, done.stdout  # and the group's
    assert "snapshot.data: 1 re-encrypted" in done.stdout, done.stdout
    after = _tokens(database)
    assert len(after) == len(tokens)
    assert all(_opens(KEY_B, t) and not _opens(KEY_A, t) for t in after)
    assert _leaks(database, secrets) == []

    second = start_kiln(tmp_path, options={"DEFAULT": {"auth_encryption_key": KEY_B,
                                                       "graceful_shutdown_timeout": 1}})
    try:
        heat = heat_client(second.endpoint("demo"))
        assert _outputs(heat, stack_id) == before
        snaps = heat.stacks.snapshot_list(stack_id)["snapshots"]
        data = json.dumps(heat.stacks.snapshot_show(stack_id, snaps[0]["id"])["snapshot"])
        assert secrets["RandomString"] in data
        # the keypair issued under key A still signs requests under key B
        cfn = cfn_client(second, keypair)
        assert cfn.describe_stacks(StackName="secrets")["Stacks"][0]["StackStatus"] == \
            "SNAPSHOT_COMPLETE"
    finally:
        second.stop()


def test_plaintext_an_older_kiln_left_still_reads_and_update_params_seals_it(
        tmp_path: Path) -> None:
    database = tmp_path / "state" / "kiln.sqlite"
    first = start_kiln(tmp_path)
    try:
        heat = heat_client(first.endpoint("demo"))
        made = heat.stacks.create(stack_name="old", template=RANDOM_TEMPLATE)
        stack_id = made["stack"]["id"]
        wait_for_stack_status(heat, stack_id)
    finally:
        first.stop()
    # as an older Kiln stored it: the outputs in plain JSON
    outputs = [{"output_key": "rs", "output_value": "plain-from-before-0123",
                "description": "No description given"}]
    db = sqlite3.connect(database)
    with db:
        db.execute("UPDATE stack SET outputs = ? WHERE id = ?", (json.dumps(outputs), stack_id))
    db.close()
    again = start_kiln(tmp_path)
    try:
        heat = heat_client(again.endpoint("demo"))
        assert _outputs(heat, stack_id) == {"rs": "plain-from-before-0123"}
    finally:
        again.stop()
    assert _leaks(database, {"old": "plain-from-before-0123"}) == ["old in stack.outputs"]
    done = _kiln_cli("db", "update-params", "--config-file", str(again.config_file),
                     cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert _leaks(database, {"old": "plain-from-before-0123"}) == []
