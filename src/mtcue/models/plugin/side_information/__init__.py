"""Hoang et al.'s side-information models and their multi-task criterion."""
