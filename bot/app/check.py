"""``python -m bot check``: the settings validated, the store opened, what is reachable probed.

Each line says what is enabled and how, so a typo'd path or an unreachable
model shows up before the first person is asked anything.
"""

from __future__ import annotations

import sys
from pathlib import Path

from pydantic import SecretStr

from bot.app.settings import Settings
from bot.errors import install_extra


async def check(settings: Settings) -> int:
    """Validate, open the store, probe what is reachable; 0 when all is well, 2 if not."""
    from bot.app import agent_spec
    from bot.human.factory import redemption_is_shared
    from bot.human.signing import signer_from
    from bot.questions.lifecycle import Lifecycle
    from bot.service.answering.policy import check_policy_names
    from bot.service.running.capability_ports import LifecyclePorts

    for line in settings.warnings():
        print(f"warning: {line}", file=sys.stderr)
    # Folders that are missing are created; say so, so a typo'd path shows up here.
    missing = [
        folder
        for folder in (settings.signing.data_dir, _sqlite_folder(settings.store.url))
        if folder is not None and not folder.exists()
    ]
    signer_from(settings.signing, shared_store=settings.store.shared)
    stores = await settings.store.open()
    try:
        await stores.ping()
        # The capability spends through the lifecycle's ports, as the server wires it.
        shared = redemption_is_shared(LifecyclePorts(Lifecycle(stores.unit), stores.checkpoints))
    finally:
        await stores.close()
    spec = agent_spec(settings)
    check_policy_names(settings.policy.question_policies(), [r.name for r in spec.registrations])
    console = "off"
    if settings.console.enabled:
        console = f"http://{settings.serving.host}:{settings.serving.port}/"
        if settings.console.users is not None:
            console += " (people sign in as themselves)"
        elif settings.console.password is not None:
            console += " (one shared sign-in: operator)"
        else:
            console += " (open to this machine; answers as the operator)"
    signing = settings.signing
    keys = "BOT_SIGNING_KEYS" if signing.keys else f"generated key in {signing.data_dir}"
    configured = settings.provider
    model = "scripted" if spec.provider else f"model {configured.model}"
    if not settings.run.chats:
        model = "agents only: a chat message gets one sentence; agents ask through /v1 and MCP"
    if spec.provider is None and configured.base_url and configured.api_key:
        problem = await _probe_model(configured.base_url, configured.api_key)
        if problem:
            print(f"configuration error: OPENAI_BASE_URL: {problem}", file=sys.stderr)
            return 2
        model += f" at {configured.base_url}, reachable"
    from bot.app.probes import probe_slack, probe_smtp, probe_teams

    slack_line = settings.slack.mode or "not configured"
    teams_line = _teams_state(settings)
    if settings.slack.mode:
        slack = await probe_slack(settings.slack)
        if slack.problem:
            named = f"{slack.variable}: " if slack.variable else ""
            print(f"configuration error: {named}{slack.problem}", file=sys.stderr)
            return 2
        slack_line += f"; {slack.detail}" if slack.detail else ""
    if settings.teams_enabled:
        teams = await probe_teams(settings.teams)
        if teams.problem:
            print(f"configuration error: {teams.variable}: {teams.problem}", file=sys.stderr)
            return 2
        teams_line += f"; {teams.detail}" if teams.detail else ""
    email_line = "off (set BOT_SMTP_URL and BOT_EMAIL_FROM to mail questions)"
    server = settings.email.server()
    if server is not None:
        smtp = await probe_smtp(settings.email)
        if smtp.problem:
            print(f"configuration error: {smtp.variable}: {smtp.problem}", file=sys.stderr)
            return 2
        email_line = f"from {settings.email.sender} through {server.shown}; {smtp.detail}"
    for folder in dict.fromkeys(f for f in missing if f.exists()):
        print(f"created:  {folder}/ (it did not exist)")
    print(f"store:    {settings.store.location} (spends shared across processes: {shared})")
    print(f"data:     {settings.signing.data_dir.resolve()} (started in {Path.cwd()})")
    print(f"signing:  {keys}")
    keyring = settings.store.keyring
    at_rest = (
        "plaintext (set BOT_DATA_KEYS to encrypt questions and answers in the store; "
        "`python -m bot keygen --data` prints one)"
        if keyring is None
        else f"encrypted, AES-GCM under data key {keyring.current!r} ({len(keyring.keys)} listed)"
    )
    print(f"at rest:  {at_rest}")
    print(f"agent:    {spec.name} ({model})")
    print(f"console:  {console}")
    print(f"slack:    {slack_line}")
    print(f"teams:    {teams_line}")
    print(f"email:    {email_line}")
    webhooks = settings.webhooks.mode or "off (set BOT_WEBHOOK_SECRET to sign callbacks)"
    print(f"webhooks: {webhooks}")
    mcp = _mcp_state(settings)
    if mcp.startswith("error: "):
        print(f"configuration error: BOT_MCP_HTTP: {mcp[7:]}", file=sys.stderr)
        return 2
    print(f"mcp:      {mcp}")
    from bot.tracing.setup import configure

    traces = configure()
    traces.shutdown()
    print(f"traces:   {traces.state}")
    return 0


def _mcp_state(settings: Settings) -> str:
    mcp = settings.mcp
    if not mcp.http:
        return "off (set BOT_MCP_HTTP=true to serve /mcp; python -m bot mcp serves stdio)"
    import importlib.util

    if importlib.util.find_spec("mcp") is None:
        return f"error: is on but the mcp extra is not installed ({install_extra('mcp')})"
    route = mcp.route or "no route (set BOT_MCP_ROUTE)"
    return f"/mcp on, questions to {route}, a {mcp.wait_seconds:g} s wait per call"


def _sqlite_folder(url: str) -> Path | None:
    prefix = "sqlite:///"
    return Path(url[len(prefix) :]).parent if url.startswith(prefix) else None


def _teams_state(settings: Settings) -> str:
    if not settings.teams_enabled:
        return "not configured (set MicrosoftAppId and MicrosoftAppPassword)"
    via = f"via {settings.teams.sdk_name()} (BOT_TEAMS_SDK={settings.teams.sdk})"
    if settings.teams_emulator:
        return (
            "emulator mode on /api/messages (no MicrosoftAppId: unauthenticated, "
            f"loopback only) {via}"
        )
    return f"app {settings.teams.app_id} ({settings.teams.app_type}) on /api/messages {via}"


async def _probe_model(base_url: str, api_key: SecretStr) -> str:
    """'' when ``GET {base}/models`` answers 200 with this key, else what went wrong."""
    import aiohttp

    url = base_url.rstrip("/") + "/models"
    headers = {"Authorization": f"Bearer {api_key.get_secret_value()}"}
    try:
        async with (
            aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10)) as session,
            session.get(url, headers=headers) as response,
        ):
            if response.status in (401, 403):
                return f"{base_url} refused OPENAI_API_KEY (HTTP {response.status}); check the key"
            if response.status != 200:
                return (
                    f"{base_url}/models answered HTTP {response.status}; check that the URL "
                    "is the API's base (it usually ends in /v1)"
                )
    except (aiohttp.ClientError, TimeoutError, OSError) as error:
        reason = type(error).__name__ if isinstance(error, TimeoutError) else str(error)
        return f"cannot reach {base_url} ({reason}); check the URL and the network"
    return ""
