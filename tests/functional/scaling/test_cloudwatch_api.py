"""The CloudWatch-compatible API of a real Kiln process, driven by botocore: boto3's
client as users run it, and botocore's own serializers, signers and parsers for each of
the three protocols CloudWatch clients speak (query/XML, JSON, rpc-v2-cbor), so every
request is built and every answer read exactly as a real client does.

The process is ``kiln api-cloudwatch`` (the API alone, as Heat's heat-api-cloudwatch),
not ``kiln serve``: the watcher of ``kiln serve`` evaluates a new alarm at its next round
(every 10 s) and would move it from INSUFFICIENT_DATA on its own, so whether the states
and history read here were the API's doing would depend on how fast the machine is.
Evaluation has its own tests (tests/unit/scaling/test_watcher.py, test_alarm_scaling.py)."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.support.server import HTTP_TIMEOUT, KilnProcess, kiln_command, start_kiln

pytestmark = pytest.mark.slow
PROTOCOLS = ("query", "json", "smithy-rpc-v2-cbor")


@pytest.fixture(scope="module")
def kiln(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KilnProcess]:
    proc = start_kiln(tmp_path_factory.mktemp("kiln"), command="api-cloudwatch",
                      options={"kiln_alarms": {"max_datums_per_request": 20}})
    yield proc
    assert proc.stop() == 0, proc.logs()


@pytest.fixture(scope="module")
def keys(kiln: KilnProcess) -> dict[str, str]:
    made = subprocess.run([*kiln_command(), "ec2-credentials", "create", "--config-file",
                           str(kiln.config_file), "--project", "demo"],
                          capture_output=True, text=True, check=True, timeout=60)
    return dict(json.loads(made.stdout))


@pytest.fixture(scope="module")
def cw(kiln: KilnProcess, keys: dict[str, str]) -> Any:
    import boto3

    return boto3.client("cloudwatch", endpoint_url=kiln.cloudwatch_url,
                        region_name="RegionOne", aws_access_key_id=keys["access"],
                        aws_secret_access_key=keys["secret"])


class Wire:
    """One protocol's botocore pipeline: serialize, sign (SigV4), send, parse."""

    def __init__(self, url: str, keys: dict[str, str], protocol: str) -> None:
        import botocore.session

        self.url = url
        self.keys = keys
        self.protocol = protocol
        self.model = botocore.session.get_session().get_service_model("cloudwatch")

    def call(self, operation: str, **params: Any) -> dict[str, Any]:
        from botocore.auth import SigV4Auth
        from botocore.awsrequest import create_request_object, prepare_request_dict
        from botocore.credentials import Credentials
        from botocore.parsers import create_parser
        from botocore.serialize import create_serializer

        op = self.model.operation_model(operation)
        request = create_serializer(self.protocol).serialize_to_request(params, op)
        prepare_request_dict(request, endpoint_url=self.url)
        aws = create_request_object(request)
        SigV4Auth(Credentials(self.keys["access"], self.keys["secret"]), "monitoring",
                  "RegionOne").add_auth(aws)
        prepared = aws.prepare()
        answer = httpx.request(prepared.method, prepared.url, headers=dict(prepared.headers),
                               content=prepared.body, timeout=30)
        parsed: dict[str, Any] = create_parser(self.protocol).parse(
            {"status_code": answer.status_code, "headers": dict(answer.headers),
             "body": answer.content}, op.output_shape)
        parsed["status"] = answer.status_code
        return parsed


def raw_query(url: str, keys: dict[str, str], form: dict[str, str]) -> httpx.Response:
    """A SigV4-signed query-protocol POST of exactly ``form``."""
    from urllib.parse import urlencode

    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    body = urlencode(form)
    request = AWSRequest("POST", url + "/", data=body, headers={
        "Content-Type": "application/x-www-form-urlencoded; charset=utf-8"})
    SigV4Auth(Credentials(keys["access"], keys["secret"]), "monitoring",
              "RegionOne").add_auth(request)
    return httpx.post(url + "/", content=body, headers=dict(request.headers), timeout=30)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_each_protocol_round_trips(kiln: KilnProcess, keys: dict[str, str],
                                   protocol: str) -> None:
    wire = Wire(kiln.cloudwatch_url, keys, protocol)
    ns = f"wire/{uuid.uuid4().hex[:6]}"
    dims = [{"Name": "host", "Value": "web-1"}]
    now = dt.datetime.now(dt.UTC)
    assert wire.call("PutMetricData", Namespace=ns, MetricData=[
        {"MetricName": "load", "Value": 3.5, "Unit": "Count", "Dimensions": dims,
         "Timestamp": now},
        {"MetricName": "load", "Dimensions": dims, "Unit": "Count",
         "StatisticValues": {"SampleCount": 3, "Sum": 6, "Minimum": 1, "Maximum": 3}},
    ])["status"] == 200
    listed = wire.call("ListMetrics", Namespace=ns)["Metrics"]
    assert listed == [{"Namespace": ns, "MetricName": "load", "Dimensions": dims}]
    stats = wire.call("GetMetricStatistics", Namespace=ns, MetricName="load",
                      Dimensions=dims, StartTime=now - dt.timedelta(minutes=5),
                      EndTime=now + dt.timedelta(minutes=5), Period=600,
                      Statistics=["SampleCount", "Sum", "Minimum", "Maximum", "Average"])
    (point,) = stats["Datapoints"]
    assert (point["SampleCount"], point["Sum"], point["Minimum"], point["Maximum"]) == \
        (4.0, 9.5, 1.0, 3.5)
    assert point["Average"] == pytest.approx(9.5 / 4)
    name = f"alarm-{protocol}-{uuid.uuid4().hex[:4]}"
    wire.call("PutMetricAlarm", AlarmName=name, Namespace=ns, MetricName="load",
              Dimensions=dims, Statistic="Maximum", Period=60, EvaluationPeriods=2,
              Threshold=10.0, ComparisonOperator="GreaterThanOrEqualToThreshold",
              AlarmActions=["http://127.0.0.1:9/never"], AlarmDescription="too loaded")
    (alarm,) = wire.call("DescribeAlarms", AlarmNames=[name])["MetricAlarms"]
    assert (alarm["StateValue"], alarm["Period"], alarm["EvaluationPeriods"],
            alarm["Threshold"], alarm["AlarmDescription"], alarm["ActionsEnabled"]) == \
        ("INSUFFICIENT_DATA", 60, 2, 10.0, "too loaded", True)
    assert isinstance(alarm["StateUpdatedTimestamp"], dt.datetime)
    for_metric = wire.call("DescribeAlarmsForMetric", Namespace=ns, MetricName="load",
                           Dimensions=dims)["MetricAlarms"]
    assert [a["AlarmName"] for a in for_metric] == [name]
    wire.call("DisableAlarmActions", AlarmNames=[name])
    assert wire.call("DescribeAlarms", AlarmNames=[name])["MetricAlarms"][0][
        "ActionsEnabled"] is False
    wire.call("EnableAlarmActions", AlarmNames=[name])
    wire.call("DisableAlarmActions", AlarmNames=[name])   # keep the action from running
    wire.call("SetAlarmState", AlarmName=name, StateValue="ALARM",
              StateReason="testing", StateReasonData='{"by": "test"}')
    (alarm,) = wire.call("DescribeAlarms", AlarmNames=[name])["MetricAlarms"]
    assert (alarm["StateValue"], alarm["StateReason"]) == ("ALARM", "testing")
    history = wire.call("DescribeAlarmHistory", AlarmName=name)["AlarmHistoryItems"]
    kinds = [h["HistoryItemType"] for h in history]
    assert kinds == ["StateUpdate", "ConfigurationUpdate"]
    assert history[0]["HistorySummary"] == "Alarm updated from INSUFFICIENT_DATA to ALARM"
    wire.call("DeleteAlarms", AlarmNames=[name])
    assert wire.call("DescribeAlarms", AlarmNames=[name])["MetricAlarms"] == []
    missing = wire.call("DeleteAlarms", AlarmNames=[name])
    assert (missing["status"], missing["Error"]["Code"]) == (404, "ResourceNotFound")


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_bad_input_is_a_400_naming_the_place(kiln: KilnProcess, keys: dict[str, str],
                                             protocol: str) -> None:
    wire = Wire(kiln.cloudwatch_url, keys, protocol)
    bad_unit = wire.call("PutMetricData", Namespace="x", MetricData=[
        {"MetricName": "m", "Value": 1, "Unit": "Parsecs"}])
    assert bad_unit["status"] == 400
    assert bad_unit["Error"]["Code"] == "InvalidParameterValue"
    assert "MetricData.member.1.Unit" in bad_unit["Error"]["Message"]
    future = wire.call("PutMetricData", Namespace="x", MetricData=[
        {"MetricName": "m", "Value": 1,
         "Timestamp": dt.datetime.now(dt.UTC) + dt.timedelta(days=2)}])
    assert future["status"] == 400 and "Timestamp" in future["Error"]["Message"]
    # what no botocore serializer would send: the query protocol's form, written by hand
    for field, value, place in (("Timestamp", "yesterday", "Timestamp"),
                                ("Timestamp", "2026-13-45T99:00:00Z", "Timestamp"),
                                ("Value", "many", "Value"), ("Value", "NaN", "Value"),
                                ("Value", "Infinity", "Value"),
                                ("Dimensions.member.1.Name", "a", "Dimensions")):
        garbled = raw_query(kiln.cloudwatch_url, keys, {
            "Action": "PutMetricData", "Version": "2010-08-01", "Namespace": "x",
            "MetricData.member.1.MetricName": "m", "MetricData.member.1.Value": "1",
            f"MetricData.member.1.{field}": value})
        assert garbled.status_code == 400, (field, value, garbled.text)
        assert f"MetricData.member.1.{place}" in garbled.text, garbled.text
    dup = wire.call("PutMetricData", Namespace="x", MetricData=[
        {"MetricName": "m", "Value": 1, "Dimensions": [{"Name": "a", "Value": "1"},
                                                       {"Name": "a", "Value": "2"}]}])
    assert dup["status"] == 400 and "duplicate" in dup["Error"]["Message"]
    period = wire.call("PutMetricAlarm", AlarmName="p", Namespace="x", MetricName="m",
                       Statistic="Average", Period=15, EvaluationPeriods=1, Threshold=1.0,
                       ComparisonOperator="GreaterThanThreshold")
    assert period["status"] == 400 and "Period" in period["Error"]["Message"]
    state = wire.call("SetAlarmState", AlarmName="nope", StateValue="ALARM",
                      StateReason="x")
    assert state["status"] == 404


def test_boto3_client_unchanged(cw: Any) -> None:
    ns = f"boto3/{uuid.uuid4().hex[:6]}"
    cw.put_metric_data(Namespace=ns, MetricData=[{"MetricName": "m", "Value": 1.0}])
    assert cw.list_metrics(Namespace=ns)["Metrics"][0]["MetricName"] == "m"
    paginator = cw.get_paginator("describe_alarms")
    for i in range(3):
        cw.put_metric_alarm(AlarmName=f"{ns}-{i}", Namespace=ns, MetricName="m",
                            Statistic="Sum", Period=60, EvaluationPeriods=1, Threshold=1,
                            ComparisonOperator="GreaterThanThreshold")
    names = [a["AlarmName"] for page in paginator.paginate(
        AlarmNamePrefix=ns, PaginationConfig={"PageSize": 2}) for a in page["MetricAlarms"]]
    assert names == [f"{ns}-{i}" for i in range(3)]


def test_signatures_are_checked(kiln: KilnProcess, keys: dict[str, str]) -> None:
    forged = Wire(kiln.cloudwatch_url, {**keys, "secret": "not-the-secret"}, "query")
    refused = forged.call("ListMetrics")
    assert (refused["status"], refused["Error"]["Code"]) == (403, "SignatureDoesNotMatch")
    stranger = Wire(kiln.cloudwatch_url, {"access": "AKIDUNKNOWN", "secret": "x"}, "json")
    assert stranger.call("ListMetrics")["Error"]["Code"] == "InvalidClientTokenId"
    unsigned = httpx.post(kiln.cloudwatch_url + "/", data={"Action": "ListMetrics"},
                          timeout=HTTP_TIMEOUT)
    assert unsigned.status_code == 400
    assert "<Code>IncompleteSignature</Code>" in unsigned.text
    wire = Wire(kiln.cloudwatch_url, keys, "query")
    unknown = wire.call("ListMetrics", NextToken="zzz")
    assert unknown["status"] == 400 and unknown["Error"]["Code"] == "InvalidNextToken"


def test_statistics_start_on_clock_boundaries(cw: Any) -> None:
    """AWS rounds StartTime down (to the minute for a start under 15 days ago, to a
    division of the minute for a period under 60 s): datapoints start on the clock, not
    on whatever second the request named."""
    ns = f"clock/{uuid.uuid4().hex[:6]}"
    minute = (int(dt.datetime.now(dt.UTC).timestamp()) // 60) * 60 - 600
    at = dt.datetime.fromtimestamp
    cw.put_metric_data(Namespace=ns, MetricData=[
        {"MetricName": "m", "Value": 1.0, "Timestamp": at(minute + 5, dt.UTC)},
        {"MetricName": "m", "Value": 2.0, "Timestamp": at(minute + 65, dt.UTC)},
        {"MetricName": "m", "Value": 4.0, "Timestamp": at(minute + 95, dt.UTC)}])
    found = cw.get_metric_statistics(
        Namespace=ns, MetricName="m", StartTime=at(minute + 34, dt.UTC),
        EndTime=at(minute + 150, dt.UTC), Period=60, Statistics=["Sum"])["Datapoints"]
    assert sorted((p["Timestamp"].timestamp(), p["Sum"]) for p in found) == [
        (minute, 1.0), (minute + 60, 6.0)]
    fine = cw.get_metric_statistics(
        Namespace=ns, MetricName="m", StartTime=at(minute + 67, dt.UTC),
        EndTime=at(minute + 120, dt.UTC), Period=30, Statistics=["Sum"])["Datapoints"]
    assert sorted((p["Timestamp"].timestamp(), p["Sum"]) for p in fine) == [
        (minute + 60, 2.0), (minute + 90, 4.0)]
