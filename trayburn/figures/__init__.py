"""The figures: what counted calls cost, by day, period, session, project, model and machine."""
