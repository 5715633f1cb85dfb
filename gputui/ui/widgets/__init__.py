"""gputui.ui.widgets."""
