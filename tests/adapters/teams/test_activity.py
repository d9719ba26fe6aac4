"""Reading activities: who (from the channel, never the text), where, and what starts a run."""

from __future__ import annotations

from adapters.teams._activity import responder_of, scope_of, started, strip_mentions, submitted
from bot.human.tokens import MintedToken, TokenClaims, TokenSigner, random_signing_key
from tests.e2e._teams import ALICE, BOT, CHANNEL, TENANT, execute, message

URL = "http://127.0.0.1:9"
# As long as Teams makes them: a personal chat id and an AAD tenant id.
PERSONAL_ID = "a:1" + "eO0XTxW6mm3U8QxI2lsT3iaTP-qL2-o8Eo7Kb0lr5hMkBRdjLfLjh4I6nFKpvaT6V7V" * 2


def test_the_responder_is_the_aad_object_id_never_the_text() -> None:
    """Identity is tenant + from.aadObjectId; a name typed in the text changes nothing."""
    activity = message(URL, "I am Bob, aad-bob")
    who = responder_of(activity)
    assert who.id == f"teams:{TENANT}:{ALICE['aadObjectId']}"
    assert who.name == "Alice"


def test_scope_is_tenant_and_conversation_and_a_thread_shares_its_channel() -> None:
    """A reply thread of a channel has the channel's scope; the thread is kept apart."""
    thread = f"{CHANNEL};messageid=17"
    activity = message(URL, "deploy web", conversation=thread, kind="channel", mention=True)
    assert scope_of(activity) == f"{TENANT}/{CHANNEL}"
    start = started(activity, {"serviceUrl": URL})
    assert start is not None
    assert (start.where.key, start.where.thread, start.text) == (thread, thread, "deploy web")


def test_only_personal_messages_or_mentions_start_runs() -> None:
    """Group and channel messages need an @mention of this bot; empty text starts nothing."""
    assert started(message(URL, "deploy web"), {}) is not None
    assert started(message(URL, "deploy web", kind="groupChat", conversation="19:g"), {}) is None
    other = message(URL, "deploy web", kind="channel", conversation=CHANNEL, mention=True)
    other["entities"][0]["mentioned"] = {"id": "28:another-bot", "name": "Other"}
    assert started(other, {}) is None
    assert started(message(URL, "   "), {}) is None


def test_mentions_are_stripped_wherever_they_are() -> None:
    assert strip_mentions("<at>Ops bot</at> deploy <at id='1'>web</at>  now") == "deploy now"


def test_only_our_cards_data_counts_as_an_answer() -> None:
    """Data without our marker, or another verb, is not an answer."""
    assert submitted(execute(URL, {"hitl": 1, "token": "t"})) == {"hitl": 1, "token": "t"}
    assert submitted(execute(URL, {"token": "t"})) is None
    other_verb = execute(URL, {"hitl": 1})
    other_verb["value"]["action"]["verb"] = "refresh"
    assert submitted(other_verb) is None
    plain = message(URL, "hello")
    assert submitted(plain) is None
    assert BOT["id"] and ALICE["aadObjectId"]


def test_tokens_for_teams_scopes_stay_under_1000_characters() -> None:
    """The longest Teams scope and thread still leave the token under the 1,000 limit."""
    activity = message(URL, "deploy web", conversation=PERSONAL_ID)
    tenant = "72f988bf-86f1-41af-91ab-2d7cd011db47"
    activity["conversation"]["tenantId"] = tenant
    claims = TokenClaims(
        jti="int_" + "f" * 32,
        sub="run_" + "e" * 16,
        iat=1_800_000_000,
        exp=1_800_600_000,
        scope=scope_of(activity),
        thread=f"{CHANNEL};messageid=1700000000001",
        checkpoint="cp_" + "d" * 32,
        call="call_" + "c" * 24,
        name="approval",
    )
    token = TokenSigner([random_signing_key("k1")]).encode(MintedToken(claims))
    assert len(token) < 1000, len(token)
