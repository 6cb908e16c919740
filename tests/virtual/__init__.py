"""Board sessions in virtual time: the real cores of board and daemon, no ptys."""
