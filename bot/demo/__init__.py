"""The embedded demo: an ops assistant over an in-process fleet, the default agent."""

from bot.demo._agent import HELP, Fleet, demo_agent, demo_script

__all__ = ["HELP", "Fleet", "demo_agent", "demo_script"]
