"""An upstream's elicitation asked in Slack (the loopback Slack Web API) and answered there."""

from __future__ import annotations

from pathlib import Path

from tests.adapters.mcp_gateway._rig import rig, text_of
from tests.doors._slack_door import FORM, SlackDoor, interaction, slack_door
from tests.e2e._api import api_env
from tests.fakes.slack_api import block_actions, buttons, posted_message, view_submission

ALICE = "U0ALICE"
CHANNEL = "C0CHAN"
RULE = f'[[rules]]\ntools = "ops__purge*"\naction = "allow"\nroute = "slack:{CHANNEL}"\n'


async def test_an_upstream_elicitation_is_a_slack_form_whose_answer_is_accept(
    tmp_path: Path,
) -> None:
    """The upstream asks why mid-call: a form in the rule's Slack channel; the person opens
    it, fills it in, submits, and the upstream gets accept with what they typed."""
    # An allow rule naming a route: forwarded at once, and its route is where elicitations go.
    async with rig(
        tmp_path, RULE, door_for=lambda folder: slack_door(folder, **api_env("slack:*"))
    ) as r:
        door = r.door
        assert isinstance(door, SlackDoor)
        call = r.call("ops__purge_cache", {"service": "web"})
        (asked,) = await door.fake.wait_for(
            "chat.postMessage", where=lambda c: bool(buttons(c.args))
        )
        assert "Why purge the cache of web?" in str(asked.args)
        (button,) = buttons(asked.args)
        action = {k: button[k] for k in ("type", "action_id", "text", "value")}
        clicked = block_actions(action, user=ALICE, message=posted_message(asked), channel=CHANNEL)
        assert (await door.slack(interaction(clicked), FORM))[0] == 200
        (opened,) = await door.fake.wait_for("views.open")
        typed = {"f:reason": {"answer": {"type": "plain_text_input", "value": "stale assets"}}}
        submitted = view_submission(opened.args["view"], typed, user=ALICE)
        assert (await door.slack(interaction(submitted), FORM))[0] == 200
        result = await call
    assert text_of(result) == "purged web: stale assets"
