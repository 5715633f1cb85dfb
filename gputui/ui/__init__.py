"""gputui.ui package."""
