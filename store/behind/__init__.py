"""The write-behind: the process that writes a durable store's journal and checkpoints.

``writer`` is the store's end (it starts the process and keeps the pipe), ``writer_process``
the process's (it writes through ``store.sql``), and ``framing`` the messages between them.
It never imports ``store.durable``: the store starts it and hands it plain rows.
"""
