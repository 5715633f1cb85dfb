"""gputui.sources package."""
