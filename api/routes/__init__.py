"""One router per resource; each route parses, authorises, calls the service, answers."""
