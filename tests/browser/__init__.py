"""Browser tests: the viewer and arbiter pages in headless Chromium."""
