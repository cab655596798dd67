"""Kiln's options, named as in heat.conf wherever Heat has the same knob.

An operator's existing heat.conf keeps working for the options Kiln shares with Heat;
Kiln-only knobs live in the ``[kiln_engine]`` group so they can never collide with a
future Heat option. The template layer never reads this module: callers pass it
the limits it needs, which keeps it pure.
"""

from __future__ import annotations

from collections.abc import Sequence

from oslo_config import cfg

CONF = cfg.ConfigOpts()

default_opts = [
    cfg.StrOpt("state_path", default="~/.local/state/kiln",
               help="Directory for the SQLite database and other state."),
    cfg.BoolOpt("debug", default=False, help="Log at DEBUG level."),
    cfg.StrOpt("log_file", help="Write logs to this file instead of stderr."),
    cfg.StrOpt("log_dir", help="Directory a relative log_file is placed in (as in Heat)."),
    cfg.BoolOpt("log_json",
                help="true: JSON lines; false: human-readable lines. Unset: JSON lines, "
                     "except human-readable ones on stderr when it is a terminal."),
    cfg.IntOpt("max_resources_per_stack", default=1000,
               help="Maximum resources in one stack's own template (each nested stack "
                    "counted alone, as Heat 27 does); "
                    "-1 means unlimited."),
    cfg.IntOpt("max_stacks_per_tenant", default=512,
               help="Maximum top-level stacks one project may have at once; -1 means unlimited."),
    cfg.IntOpt("max_template_size", default=524288, help="Maximum raw template size in bytes."),
    cfg.IntOpt("max_nested_stack_depth", default=5, help="Maximum depth of nested stacks."),
    cfg.IntOpt("max_events_per_stack", default=1000,
               help="Events kept per stack; beyond this the oldest are purged as events "
                    "are written (checked every half event_purge_batch_size events of a "
                    "stack, and when an action ends)."),
    cfg.ListOpt("hidden_stack_tags", default=[],
                help="Stacks with any of these tags are left out of stack lists unless "
                     "show_hidden is asked for."),
    cfg.IntOpt("event_purge_batch_size", default=200,
               help="How many events to purge at once when the limit is exceeded."),
    cfg.IntOpt("max_json_body_size", default=1048576,
               help="Maximum JSON request body in bytes (native API, temp-URL signals); "
                    "a larger declared Content-Length is refused before the body is read."),
    cfg.IntOpt("stack_action_timeout", default=3600,
               help="Default timeout in seconds for a stack action."),
    cfg.IntOpt("max_snapshots_per_stack", default=32, help="Maximum snapshots per stack."),
    cfg.IntOpt("max_stack_versions", default=20, min=0,
               help="Templates, environments and files kept per stack in its history "
                    "(Kiln's own; each create and update adds one, the oldest go first; "
                    "0 keeps none)."),
    cfg.IntOpt("client_retry_limit", default=2, min=0,
               help="Times to retry an OpenStack API call that failed with an expected "
                    "intermittent error (a 409 conflict, a 5xx, a rate limit, a dropped "
                    "connection); 0 disables retries."),
    cfg.IntOpt("action_retry_limit", default=5,
               help="Times to retry a resource action that failed with a retryable error."),
    cfg.IntOpt("max_server_name_length", default=53),
    cfg.StrOpt("auth_encryption_key", secret=True,
               help="Key that encrypts secrets at rest (hidden parameters, credentials, "
                    "outputs, snapshots, servers' metadata; docs/security.md). Unset: a "
                    "random key generated once in <state_path>/auth_encryption_key (mode "
                    "0600); set it, the same on every process sharing a server database. "
                    "Heat's public sample value is refused unless [paste_deploy] flavor "
                    "is noauth. Changing it: `kiln db update-params "
                    "--previous-encryption-key OLD`."),
    cfg.BoolOpt("encrypt_parameters_and_properties", default=True,
                help="Encrypt hidden parameter values and resource properties (and events' "
                     "copies of them) at rest. Outputs, snapshots, metadata, deployment "
                     "data and resource data plugins mark secret are encrypted either "
                     "way."),
    cfg.ListOpt("plugin_dirs", default=[],
                help="Directories scanned for resource plugin modules."),
    cfg.StrOpt("region_name_for_services", default="RegionOne",
               help="Region reported by AWS::Region and Fn::GetAZs."),
    cfg.StrOpt("region_name_for_shared_services",
               help="Region of the services listed in shared_services_types."),
    cfg.ListOpt("shared_services_types", default=["image", "volumev3"],
                help="Service types reached in region_name_for_shared_services when set."),
    cfg.StrOpt("heat_metadata_server_url",
               help="URL of the CloudFormation-compatible API that servers read metadata "
                    "from (/v1/ added when missing), also the base of the temp URLs "
                    "servers are given. Unset: http://<[heat_api_cfn] bind_host:bind_port> "
                    "for metadata, http://<[heat_api] bind_host:bind_port> for temp "
                    "URLs (a wildcard bind_host: this machine's host name). URLs handed "
                    "to servers never come from a request."),
    cfg.StrOpt("heat_watch_server_url",
               help="URL of the CloudWatch-compatible API servers push metrics to "
                    "(cfn-push-stats); default: http://<[heat_api_cloudwatch] bind>."),
    cfg.StrOpt("heat_waitcondition_server_url",
               help="URL of the wait-condition endpoint in the pre-signed URLs servers "
                    "are given (e.g. http://kiln.example.com:8000/v1/waitcondition; "
                    "signal URLs replace /waitcondition by /signal). Unset: the "
                    "heat_metadata_server_url URL followed by waitcondition."),
    cfg.ListOpt("template_url_allowed_schemes", default=["http", "https"],
                help="Schemes a template_url may use."),
    cfg.IntOpt("template_url_timeout", default=10, help="Seconds to fetch a template_url."),
    cfg.StrOpt("loadbalancer_template",
               help="A file holding the template AWS::ElasticLoadBalancing::LoadBalancer "
                    "runs as its nested stack instead of Kiln's built-in haproxy server "
                    "(as Heat's option of that name)."),
    cfg.ListOpt("template_url_allowed_hosts", default=[],
                help="Host names and networks (CIDR, or single addresses) that template_url "
                     "and a nested stack's TemplateURL may reach although they are loopback "
                     "or private; link-local addresses (169.254.0.0/16, the metadata "
                     "service) are never fetched. Every redirect is checked too."),
    cfg.IntOpt("num_engine_workers", min=0,
               help="Engine processes kiln engine runs, each registered in the service "
                    "list. Unset (or 0): as Heat, max(4, CPUs) with a [DEFAULT] "
                    "transport_url, one without (no broker hands an engine work then)."),
    cfg.IntOpt("periodic_interval", default=60,
               help="Seconds between engine housekeeping runs."),
    cfg.IntOpt("engine_life_check_timeout", default=2, min=1,
               help="Seconds to wait for an engine to answer whether it is alive (with "
                    "transport_url: asked when a request forwarded to the engine holding "
                    "its stack has no reply within this time; no answer either is a "
                    "503)."),
    cfg.StrOpt("host", default="kiln", help="Name of this host, as reported by services "
                                            "and in notifications' publisher_id."),
    cfg.StrOpt("default_notification_level", default="INFO",
               help="Priority of the notifications that report no error (those that do "
                    "are sent at ERROR)."),
    cfg.StrOpt("default_publisher_id",
               help="publisher_id of notifications; default: orchestration.<host>."),
    cfg.IntOpt("graceful_shutdown_timeout", default=60, min=0,
               help="Seconds a stopping server waits for in-flight requests and engine work "
                    "to finish or checkpoint; 0 waits without limit."),
]

database_opts = [
    cfg.StrOpt("connection", secret=True,
               help="SQLAlchemy URL. Default: SQLite file kiln.sqlite under state_path."),
    cfg.IntOpt("max_pool_size", default=5),
    cfg.IntOpt("max_overflow", default=50),
    cfg.IntOpt("pool_timeout", default=30),
]

heat_api_opts = [
    cfg.HostAddressOpt("bind_host", default="127.0.0.1", help="Address the native API binds."),
    cfg.PortOpt("bind_port", default=8004, help="Port of the native API."),
    cfg.IntOpt("workers", default=1, min=0,
               help="Processes serving the native API (kiln api; kiln serve: processes "
                    "each running the whole service), on the same listening socket; 0 "
                    "means one per CPU. Heat's default is 0; Kiln's is 1. More than 1 "
                    "needs [DEFAULT] transport_url and kiln engine "
                    "(docs/deployment-workers.md)."),
]

heat_api_cfn_opts = [
    cfg.HostAddressOpt("bind_host", default="127.0.0.1",
                       help="Address the CloudFormation-compatible API binds (kiln serve, "
                            "kiln api-cfn)."),
    cfg.PortOpt("bind_port", default=8000,
                help="Port of the CloudFormation-compatible API and of the pre-signed "
                     "wait-condition and signal URLs servers call."),
    cfg.IntOpt("workers", default=1, min=0,
               help="Processes of kiln api-cfn, on the same listening socket; 0 means one "
                    "per CPU. More than 1 needs [DEFAULT] transport_url."),
]

heat_api_cloudwatch_opts = [
    cfg.HostAddressOpt("bind_host", default="127.0.0.1",
                       help="Address the CloudWatch-compatible query API binds."),
    cfg.PortOpt("bind_port", default=8003,
                help="Port of the CloudWatch-compatible query API (heat-api-cloudwatch)."),
    cfg.IntOpt("workers", default=1, min=0,
               help="Processes of kiln api-cloudwatch, on the same listening socket; 0 "
                    "means one per CPU. More than 1 needs [DEFAULT] transport_url."),
]

alarm_opts = [
    cfg.FloatOpt("evaluation_interval", default=10.0, min=0.05,
                 help="Seconds between the watcher's rounds; each round evaluates the "
                      "alarms whose period has passed since they were last evaluated."),
    cfg.IntOpt("metric_retention", default=86400, min=60,
               help="Seconds metric data points are kept; older ones are deleted, and "
                    "PutMetricData refuses points older than this."),
    cfg.IntOpt("history_retention", default=1209600, min=60,
               help="Seconds alarm history items are kept."),
    cfg.FloatOpt("lease_ttl", default=30.0, min=1.0,
                 help="Seconds the engine evaluating alarms holds its lease; another "
                      "engine on the same database takes over when it lapses."),
    cfg.IntOpt("max_datums_per_request", default=1000, min=1,
               help="Data points one PutMetricData request may carry."),
]

yaql_opts = [
    cfg.IntOpt("limit_iterators", default=200,
               help="Maximum elements a yaql collection may produce."),
    cfg.IntOpt("memory_quota", default=10000,
               help="Maximum memory (bytes) a yaql expression may use."),
    cfg.FloatOpt("timeout", default=5.0, min=0.1,
                 help="Seconds one yaql evaluation may run in the sandbox process (Kiln "
                      "only): expressions are evaluated in the server's process within fixed "
                      "bounds (0.1 s, 32 MiB, RE2 for regexes); one beyond them runs in a "
                      "long-lived worker process that is killed at this deadline, since "
                      "yaql's own limits do not bound time."),
]

engine_opts = [
    cfg.IntOpt("max_function_output_size", default=4194304, min=1024,
               help="Largest result one template function may build, in characters of a "
                    "string plus items of lists and maps at every level (str_replace, "
                    "repeat, list_join, ...): checked before the result is built, so a "
                    "small template cannot make the engine build gigabytes."),
    cfg.IntOpt("max_concurrency", default=1000,
               help="Resource actions running at once in one engine, across all stacks."),
    cfg.FloatOpt("poll_initial_delay", default=0.01,
                 help="First delay before re-checking an unfinished resource action."),
    cfg.FloatOpt("poll_max_delay", default=2.0,
                 help="Largest delay between checks of an unfinished resource action."),
    cfg.FloatOpt("heartbeat_interval", default=5.0,
                 help="Seconds between engine liveness heartbeats."),
    cfg.FloatOpt("engine_dead_after", default=20.0,
                 help="An engine silent for this long is dead; its work is taken over."),
    cfg.StrOpt("rpc_topic", default="kiln-engine",
               help="With transport_url: the RPC topic Kiln's engines listen on, on "
                    "control_exchange. Not Heat's 'engine', so a Heat sharing the broker "
                    "never gets Kiln's messages; two Kiln deployments on one broker each "
                    "need their own (RabbitMQ names a topic's queue after the topic alone)."),
    cfg.IntOpt("max_signals_per_resource", default=1000, min=1,
               help="Signals (distinct ids) one resource keeps, a wait-condition handle "
                    "for one: a signal with a new id beyond this is refused (400, "
                    "RequestLimitExceeded) and what was kept stays; a signal repeating "
                    "a kept id replaces it and is always within this count."),
    cfg.IntOpt("max_signal_size", default=65536, min=256,
               help="Largest signal a resource keeps, in bytes of its stored JSON "
                    "(data, reason, status); a larger one is refused (400, "
                    "RequestLimitExceeded). Request bodies are bounded before that by "
                    "max_json_body_size."),
    cfg.IntOpt("drift_concurrency", default=4, min=1,
               help="Cloud reads one drift detection (DetectStackDrift, `kiln stack "
                    "drift`, an update with converge) makes at once: each resource's "
                    "object is read once, at most this many at a time."),
    cfg.IntOpt("drift_results_per_stack", default=10, min=1,
               help="Drift detections a stack keeps (with their per-resource "
                    "differences); the oldest goes when a new one starts."),
    cfg.IntOpt("max_signals_size_per_resource", default=1048576, min=256,
               help="Bytes of signals one resource keeps in all (what a GET of its "
                    "metadata, or of its wait condition's data, returns at most besides "
                    "its template metadata): a signal that would take it past this is "
                    "refused (400, RequestLimitExceeded) and what was kept stays."),
]

api_opts = [
    cfg.BoolOpt("serve_cfn", default=True,
                help="kiln serve also serves the CloudFormation-compatible API on "
                     "[heat_api_cfn] (kiln serve --no-cfn: false). Without it, the "
                     "metadata, signal and wait-condition URLs servers are given work "
                     "only if heat_metadata_server_url and heat_waitcondition_server_url "
                     "name a CloudFormation API served elsewhere (kiln api-cfn)."),
    cfg.BoolOpt("serve_cloudwatch", default=True,
                help="kiln serve also serves the CloudWatch-compatible API on "
                     "[heat_api_cloudwatch] (kiln serve --no-cloudwatch: false). Without "
                     "it, metrics pushed by servers (cfn-push-stats) and CloudWatch clients "
                     "reach Kiln only through a kiln api-cloudwatch on the same "
                     "database."),
    cfg.BoolOpt("dashboard", default=True,
                help="Serve the web dashboard at / to browsers (requests that accept "
                     "text/html); API clients get Heat's version document there either "
                     "way. false: no dashboard page or assets are served."),
    cfg.FloatOpt("event_stream_recheck_interval", default=2.0, min=0.1,
                 help="Seconds between the re-reads an open event stream (GET .../events"
                      "?stream=true) makes while its stack is IN_PROGRESS, to see events "
                      "another process on the same database committed; this process's "
                      "own events are streamed as they are committed, without re-reads."),
    # per-credential budgets on what servers' agents call (kiln.api.ratelimit): Heat has
    # none; each API process enforces its own
    cfg.FloatOpt("agent_signal_rate", default=10.0, min=0,
                 help="Signals per second one credential may send on this API process, "
                      "sustained (native resource signals, temp-URL PUTs, the CFN "
                      "/v1/waitcondition and /v1/signal URLs); the key is the credential "
                      "that authenticated the call (stack user, EC2 access key, temp URL's "
                      "or signal token's resource). Over it: 429 with Retry-After, nothing "
                      "done. 0: unlimited. Each API process has its own budget."),
    cfg.IntOpt("agent_signal_burst", default=200, min=1,
               help="Signals one credential may send at once before agent_signal_rate "
                    "applies (e.g. a group's servers all signalling one wait-condition "
                    "handle as they boot)."),
    cfg.FloatOpt("agent_metadata_rate", default=10.0, min=0,
                 help="Metadata reads per second one credential may make on this API "
                      "process, sustained (native resource metadata and "
                      "software_deployments/metadata, temp-URL GETs and HEADs, CFN "
                      "DescribeStackResource); os-collect-config polls every 30 s. Over "
                      "it: 429 with Retry-After. 0: unlimited."),
    cfg.IntOpt("agent_metadata_burst", default=100, min=1,
               help="Metadata reads one credential may make at once before "
                    "agent_metadata_rate applies."),
    cfg.FloatOpt("agent_metric_rate", default=10.0, min=0,
                 help="PutMetricData calls per second one EC2 credential may make on this "
                      "API process, sustained (cfn-push-stats pushes once a minute). Over "
                      "it: AWS's Throttling error, 429 with Retry-After, nothing stored. "
                      "0: unlimited."),
    cfg.IntOpt("agent_metric_burst", default=100, min=1,
               help="PutMetricData calls one credential may make at once before "
                    "agent_metric_rate applies."),
    cfg.IntOpt("agent_rate_limit_keys", default=10000, min=1,
               help="Credentials whose budgets each API process keeps per kind of call, "
                    "least recently used dropped first (a dropped budget starts full "
                    "again), so the limiter's own memory is bounded."),
    cfg.ListOpt("allowed_hosts", default=[],
                help="Extra host names the native API answers to in noauth mode, "
                     "besides IP addresses, localhost, the listeners' bind_host names (this "
                     "machine's host name for a wildcard bind_host) and the hosts of "
                     "heat_metadata_server_url, heat_waitcondition_server_url, "
                     "heat_watch_server_url and [clients_heat] url. A request whose Host "
                     "header names anything else is refused (403), as a DNS rebinding "
                     "attack would send it. *.example.com: every name in that domain; *: "
                     "any name (no check). Not used with authentication."),
    # failed authentications per client address (kiln.api.auth_budget): Heat has none
    cfg.FloatOpt("failed_auth_rate", default=1.0, min=0,
                 help="Failed authentications per second one client address (an IPv6 "
                      "client: its /64) may cause on this API process, sustained: bad or "
                      "missing tokens, bad EC2 signatures, bad temp URLs, on every "
                      "listener. Requests that authenticate are never counted. Over it "
                      "the address's requests get 429 with Retry-After in the API's "
                      "format, without their credentials being checked, except "
                      "credentials this process already holds as valid in memory (a "
                      "cached token or keypair). 0: unlimited."),
    cfg.IntOpt("failed_auth_burst", default=100, min=1,
               help="Failed authentications one client address may cause at once before "
                    "failed_auth_rate applies."),
    cfg.IntOpt("failed_auth_keys", default=10000, min=1,
               help="Client addresses whose failure budgets each API process keeps, "
                    "least recently used dropped first, so the limiter's own memory is "
                    "bounded."),
]

#: Heat's CORS section (oslo.middleware's filter there); Kiln reads the allowed origins
cors_opts = [
    cfg.ListOpt("allowed_origin", default=[],
                help="Web origins (scheme://host[:port], no trailing slash; * for any) "
                     "whose pages may call the native API from a browser: their "
                     "POST/PUT/PATCH/DELETE requests are accepted and answered with CORS "
                     "headers. Requests from any other site's pages that would change "
                     "something are refused (403)."),
]

#: Heat's per-client sections ``[clients_<name>]`` (each falls back to ``[clients]``)
CLIENT_NAMES = ("aodh", "barbican", "cinder", "designate", "glance", "heat", "keystone",
                "magnum", "manila", "mistral", "neutron", "nova", "octavia", "swift",
                "trove", "zaqar")

_ENDPOINT_TYPES = ["publicURL", "internalURL", "adminURL", "public", "internal", "admin"]

default_clients_opts = [
    cfg.StrOpt("endpoint_type", default="public", choices=_ENDPOINT_TYPES,
               help="Catalog interface used to reach OpenStack services."),
    cfg.StrOpt("ca_file", help="CA bundle for TLS connections to OpenStack services."),
    cfg.StrOpt("cert_file", help="Client certificate (PEM) for OpenStack services."),
    cfg.StrOpt("key_file", help="Private key (PEM) of cert_file."),
    cfg.BoolOpt("insecure", default=False,
                help="Do not verify OpenStack services' TLS certificates."),
]

#: no defaults: an unset option falls back to ``[clients]`` (Heat's rule)
per_client_opts = [
    cfg.StrOpt("endpoint_type", choices=_ENDPOINT_TYPES,
               help="Catalog interface for this service (default: [clients])."),
    cfg.StrOpt("ca_file", help="CA bundle for this service (default: [clients])."),
    cfg.StrOpt("cert_file", help="Client certificate for this service."),
    cfg.StrOpt("key_file", help="Private key of cert_file for this service."),
    cfg.BoolOpt("insecure", help="Skip TLS verification for this service."),
]

keystone_client_opts = [
    cfg.StrOpt("auth_uri", help="Keystone URL (unversioned or /v3) the cloud plugins "
                                "authenticate against when [kiln_clients] gives none."),
]

kiln_clients_opts = [
    cfg.StrOpt("cloud", help="Name of a cloud in clouds.yaml whose credentials the cloud "
                             "resource plugins use (a single-user Kiln, no Keystone "
                             "in front of the API)."),
    cfg.StrOpt("clouds_file", help="clouds.yaml to read 'cloud' from (default: "
                                   "openstacksdk's search path)."),
    cfg.StrOpt("auth_url", help="Keystone URL, with username/password/project_name, "
                                "instead of a clouds.yaml cloud."),
    cfg.StrOpt("username"),
    cfg.StrOpt("password", secret=True),
    cfg.StrOpt("project_name"),
    cfg.StrOpt("user_domain_name", default="Default"),
    cfg.StrOpt("project_domain_name", default="Default"),
    cfg.DictOpt("endpoint_override", default={},
                help="service type:URL pairs used instead of the catalog's URL "
                     "(e.g. compute:http://nova.example:8774/v2.1)."),
    cfg.IntOpt("max_workers", default=64, min=1,
               help="Threads making OpenStack API calls at once (openstacksdk is "
                    "synchronous; the engine awaits these calls)."),
    cfg.FloatOpt("retry_initial_delay", default=0.5, min=0,
                 help="First pause before retrying a transient API error; doubles "
                      "after each try."),
    cfg.IntOpt("catalog_cache_seconds", default=300, min=0,
               help="How long the service catalog read for resource type listings "
                    "is kept."),
]

CONF.register_opts(default_opts)
CONF.register_opts(database_opts, group="database")
CONF.register_opts(heat_api_opts, group="heat_api")
CONF.register_opts(heat_api_cfn_opts, group="heat_api_cfn")
CONF.register_opts(heat_api_cloudwatch_opts, group="heat_api_cloudwatch")
CONF.register_opts(alarm_opts, group="kiln_alarms")
CONF.register_opts(yaql_opts, group="yaql")
CONF.register_opts(engine_opts, group="kiln_engine")
CONF.register_opts(api_opts, group="kiln_api")
CONF.register_opts(cors_opts, group="cors")
CONF.register_opts(default_clients_opts, group="clients")
for _client in CLIENT_NAMES:
    CONF.register_opts(per_client_opts, group=f"clients_{_client}")
CONF.register_opts(keystone_client_opts, group="clients_keystone")
CONF.register_opts([
    cfg.StrOpt("url", help="The native API's URL handed to servers in signal URLs "
                           "(a wait-condition handle's endpoint, a HEAT_SIGNAL alarm_url), "
                           "as in Heat: http://kiln.example.com:8004/v1/%(tenant_id)s. "
                           "Unset, the [heat_api] listener's address (behind a load "
                           "balancer, set it to the balancer's)."),
], group="clients_heat")
CONF.register_opts(kiln_clients_opts, group="kiln_clients")


def _register_identity_options() -> None:
    from kiln import conf_identity as options

    options.register(CONF)


_register_identity_options()


def load(args: Sequence[str] = (), config_files: Sequence[str] = ()) -> cfg.ConfigOpts:
    """Parse options; an unknown option in a config file is a startup error (see cli)."""
    CONF(list(args), project="kiln", default_config_files=list(config_files),
         validate_default_values=True)
    return CONF
