"""Turning results into things people read: tables now; plots and HTML reports later."""
