"""The studio's views, one module for each page or part of a page.

- ``sessions``: my sessions, and creating, renaming and deleting one.
- ``pages``: one session's studio, the folded parts of its tree and strip, the inspector.
- ``writes``: the HTMX writes behind the studio page.
- ``branch_writes``: the inspector's branch tools (fork, regenerate, edit and resend).
- ``answers``: how every write answers, done or refused.
- ``access``: the session a request may see.
- ``variants``, ``lettering``, ``reading``: the strip's variants, the comic's lettering
  and layout, chapters and reading state.
- ``compare``, ``timeline``, ``tree_tools``: two branches side by side, the journal
  replayed as a slider, and tools on the tree.
- ``share_links``, ``shared``: read-only links to a branch, and the page they show.
- ``files``, ``transfer``: panels and the episode export, and whole-session files.
- ``about``: what this studio runs on.

Every write goes through ``jaiweb.commands.sessions`` or the store's services. A view only
maps a request to one of them, and the outcome to a response.
"""
