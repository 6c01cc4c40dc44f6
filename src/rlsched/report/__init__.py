"""Leaderboards, figures and Markdown reports."""
