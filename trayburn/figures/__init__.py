"""The figures: what counted calls cost, by day, period, session, project, model and machine. Never reads
the apps' files and never speaks SQL: they are built from the ledger's named rows.
"""
