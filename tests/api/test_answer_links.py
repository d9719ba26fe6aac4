"""Answer links: signed, bound to one question and one answerer, expiring with the question."""

from __future__ import annotations

import base64
import dataclasses
import json

import jwt
import pytest

from bot.api.links import AnswerLinks, LinkExpiredError, LinkInvalidError
from bot.contract.payloads import payload_of
from bot.human.pause_event import claims_for
from bot.human.tokens import MintedToken, SigningKey, TokenInvalidError, TokenSigner
from bot.questions.records import Question, QuestionStatus

NOW = 1_800_000_000.0
SECRET = "s" * 48
KEY = SigningKey("k1", SECRET, SECRET)
LINKS = AnswerLinks([KEY], public_url="https://bridge.example.org/")


def question(**changes: object) -> Question:
    base = Question(
        interrupt_id="int_" + "a" * 24,
        run_id="run_" + "b" * 16,
        scope="api",
        name="approval",
        tool_call_id="call_1",
        checkpoint_id="",
        payload=payload_of("approval", {"action": "deploy"}),
        issued_at=NOW - 10,
        expires_at=NOW + 3600.5,
    )
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]


def token_of(url: str) -> str:
    return url.removeprefix("https://bridge.example.org/q/")


def test_a_link_is_an_absolute_url_under_the_public_url_and_round_trips() -> None:
    """url_for gives {public_url}/q/<token>; the token reads back to its question and answerer."""
    url = LINKS.url_for(question(), "link:ticket-42", preselect="approve")
    assert url.startswith("https://bridge.example.org/q/")
    claims = LINKS.read(token_of(url))
    assert claims.interrupt_id == question().interrupt_id
    assert claims.answerer == "link:ticket-42"
    assert claims.preselect == "approve"
    # Rounded up: the link never dies before its question.
    assert claims.expires_at == int(NOW) + 3601
    assert LINKS.read(LINKS.token_for(question(), "email:ana@example.org")).preselect is None


def test_links_for_two_answerers_differ_and_bind_their_own() -> None:
    """One question, two answerers: two tokens, each naming only its own answerer."""
    ana = LINKS.token_for(question(), "email:ana@example.org")
    bob = LINKS.token_for(question(), "email:bob@example.org")
    assert ana != bob
    assert LINKS.read(ana).answerer == "email:ana@example.org"
    assert LINKS.read(bob).answerer == "email:bob@example.org"


def test_a_tampered_answerer_or_question_is_refused() -> None:
    """Changing the answerer or question in the payload breaks the signature."""
    header, payload, signature = LINKS.token_for(question(), "link:a").split(".")
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    for change in ({"sub": "link:b"}, {"jti": "int_other"}, {"exp": int(NOW) + 999_999}):
        forged = base64.urlsafe_b64encode(json.dumps({**claims, **change}).encode())
        spelt = ".".join([header, forged.rstrip(b"=").decode(), signature])
        with pytest.raises(LinkInvalidError):
            LINKS.read(spelt)


@pytest.mark.parametrize(
    "token",
    [
        "",
        "not-a-token",
        "A" * 10_240,
        jwt.encode({"jti": "i", "sub": "a", "exp": 9}, None, algorithm="none"),
        jwt.encode(
            {"jti": "i", "sub": "a", "exp": 9, "aud": "chatops-bridge/answer-link"},
            "x" * 48,
            algorithm="HS256",
            headers={"kid": "k9"},
        ),
    ],
    ids=["empty", "garbage", "10 kB", "alg none", "unknown kid"],
)
def test_anything_not_signed_as_a_link_is_refused(token: str) -> None:
    """Garbage, alg none and an unknown key are each a LinkInvalidError."""
    with pytest.raises(LinkInvalidError):
        LINKS.read(token)


def test_a_link_signed_by_another_deployment_is_refused() -> None:
    """Same kid, another secret: refused."""
    stranger = AnswerLinks([SigningKey("k1", "t" * 48, "t" * 48)], public_url="https://x.test")
    with pytest.raises(LinkInvalidError):
        LINKS.read(stranger.token_for(question(), "link:a"))


def test_a_link_is_not_a_resume_token_nor_the_other_way_round() -> None:
    """Same keys, separate audiences: neither token is accepted as the other."""
    signer = TokenSigner([KEY])
    resume = signer.encode(MintedToken(claims_for(question())))
    with pytest.raises(LinkInvalidError):
        LINKS.read(resume)
    with pytest.raises(TokenInvalidError):
        signer.decode(LINKS.token_for(question(), "link:a"), now=NOW)
    # And the link holds nothing of the resume token.
    assert resume not in LINKS.url_for(question(), "link:a")


def test_rotated_keys_still_read_links_the_old_key_signed() -> None:
    """A new key in front signs; the old one, still listed, verifies older links."""
    old = LINKS.token_for(question(), "link:a")
    rotated = AnswerLinks([SigningKey("k2", "n" * 48, "n" * 48), KEY], public_url="https://x")
    assert rotated.read(old).answerer == "link:a"
    assert "k2" in json.dumps(jwt.get_unverified_header(rotated.token_for(question(), "link:a")))


def test_a_link_expires_with_its_question_unless_the_question_was_extended() -> None:
    """Past exp it is expired; an open question extended past now keeps its link working."""
    record = question()
    token = LINKS.token_for(record, "link:a")
    assert LINKS.read_live(token, now=NOW, question=record).answerer == "link:a"
    later = NOW + 7200
    with pytest.raises(LinkExpiredError):
        LINKS.read_live(token, now=later, question=record)
    with pytest.raises(LinkExpiredError):
        LINKS.read_live(token, now=later)
    extended = dataclasses.replace(record, expires_at=NOW + 86_400)
    assert LINKS.read_live(token, now=later, question=extended).answerer == "link:a"
    # A closed question's extension no longer counts, nor another question's expiry.
    closed = dataclasses.replace(extended, status=QuestionStatus.ANSWERED)
    assert LINKS.read(token).expired(later, closed)
    other = dataclasses.replace(extended, interrupt_id="int_other")
    assert LINKS.read(token).expired(later, other)


def test_a_link_whose_question_the_sweeper_expired_is_expired_at_once() -> None:
    """The row says expired: so is the link, though its own time has not come."""
    record = question()
    token = LINKS.token_for(record, "link:a")
    swept = dataclasses.replace(record, status=QuestionStatus.EXPIRED)
    with pytest.raises(LinkExpiredError):
        LINKS.read_live(token, now=NOW, question=swept)
    assert not LINKS.read(token).expired(NOW, record)
