"""Reads behind the studio's pages, a module per page or concern."""
