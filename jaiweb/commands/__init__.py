"""What people do with a session: the commands behind the pages, the API and the socket."""
