"""gputui.domain package."""
