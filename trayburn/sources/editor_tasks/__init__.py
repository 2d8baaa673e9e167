"""The editor apps' task folders as a source (the Cline extension before 4.0 and the old Cline CLI, Roo Code, Kilo
Code 5): where each app keeps them (`places`), their JSON (`parse`), the Source (`source`)."""
