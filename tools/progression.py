#!/usr/bin/env python3
"""Placeholder: filled in below."""
