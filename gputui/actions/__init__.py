"""gputui.actions package."""
