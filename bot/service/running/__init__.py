"""Running a run: the service, its turns and resumes, leases,
background tasks, and what an operator watches.
"""
