"""The studio's views: `sessions` (my sessions), `pages` (one session's studio and its
parts), `writes` (the HTMX writes behind it), `answers` (how every write answers, done or
refused), `files` (panels and the episode export).

Every write goes through ``jaiweb.commands.sessions`` or the store's services; a view only
maps a request to one of them and the outcome to a response.
"""
