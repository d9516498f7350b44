#!/usr/bin/env python3
"""A clinic front-desk agent that talks with the patient, in Python with the standard library only.

Written from docs/agent-protocol.md (conversations): the first stdin line is {"message", "context",
"conversation": {"turn", "max_turns"}}; each turn is one JSON line on stdout with a "reply" (and
"done": true when the agent ends the conversation); the harness answers with {"message", "turn"} on
stdin, or closes stdin when the conversation is over. Tools over $STATEGATE_TOOLS_URL. Logs to stderr.

`python3 agent.py --serve` is the same agent as a server (agent.url): one POST per turn with
"conversation": {"id", "turn", "max_turns", "history"}, answered with that turn's line.

CLINIC_AGENT=careful (default) asks the date of birth when two patients share a name and confirms
before cancelling; CLINIC_AGENT=hasty takes the first patient of the name and cancels at once.
"""
import json
import os
import re
import sys
import urllib.error
import urllib.request


def log(*parts):
    print("clinic-agent:", *parts, file=sys.stderr, flush=True)


TOOLS = {"url": os.environ.get("STATEGATE_TOOLS_URL", "")}


def call(tool, **args):
    """POST $STATEGATE_TOOLS_URL/tools/NAME (in server mode the body's tools_url); the result, or None on an error."""
    url = TOOLS["url"].rstrip("/") + "/tools/" + tool
    req = urllib.request.Request(url, data=json.dumps(args).encode(), method="POST",
                                 headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=10) as res:
            return json.loads(res.read())["result"]
    except urllib.error.HTTPError as err:
        log(tool, "failed:", err.code, err.read()[:200])
        return None


def turn_line(reply, done=False, outcome=None):
    line = {"reply": reply}
    if done:
        line["done"] = True
    if outcome:
        line["outcome"] = outcome
    return line


def next_message():
    """The user's next turn, or None when the harness closed stdin (the conversation is over)."""
    line = sys.stdin.readline()
    if not line:
        return None
    return json.loads(line)["message"]


NAME = re.compile(r"this is ([A-Z][a-z]+(?: [A-Z][a-z]+)+)")
DATE = re.compile(r"\b(\d{4}-\d{2}-\d{2})\b")
YES = re.compile(r"\b(yes|yeah|please do|go ahead)\b", re.I)


class Desk:
    def __init__(self, careful):
        self.careful = careful
        self.name = None
        self.appointment = None
        self.stage = "start"

    def turn(self, message):
        """Handles one user turn and returns the agent's turn (done: true when the agent ends)."""
        if self.stage == "start":
            match = NAME.search(message)
            if not match:
                return turn_line("May I have your full name, please?")
            self.name = match.group(1)
            self.wants_cancel = "cancel" in message.lower()
            patients = call("find_patients", name=self.name) or []
            if not patients:
                return turn_line(f"I could not find a patient named {self.name}.", done=True, outcome="FAILURE")
            if len(patients) > 1 and self.careful:
                self.stage = "dob"
                return turn_line(f"We have more than one patient named {self.name}. What is your date of birth?")
            return self.found(patients[0])
        if self.stage == "dob":
            match = DATE.search(message)
            if not match:
                return turn_line("Sorry, I need your date of birth as YYYY-MM-DD. What is your date of birth?")
            patients = call("find_patients", name=self.name, dob=match.group(1)) or []
            if len(patients) != 1:
                return turn_line("I could not match that date of birth. Please call the front desk.",
                                 done=True, outcome="ESCALATED")
            return self.found(patients[0])
        if self.stage == "confirm":
            if YES.search(message):
                return self.cancel()
            return turn_line("All right, I have not cancelled anything.", done=True, outcome="SUCCESS")
        return turn_line("Is there anything else?")

    def found(self, patient):
        appointments = call("list_appointments", patient_id=patient["id"]) or []
        if not appointments:
            return turn_line("You have no booked appointment.", done=True, outcome="SUCCESS")
        self.appointment = appointments[0]
        when = self.appointment["starts_at"]
        if not self.wants_cancel:
            self.stage = "told"
            return turn_line(f"Your next appointment is on {when}.", outcome="SUCCESS")
        if self.careful:
            self.stage = "confirm"
            return turn_line(f"I found your appointment on {when}. Shall I go ahead and cancel it?")
        return self.cancel()

    def cancel(self):
        done = call("cancel_appointment", appointment_id=self.appointment["id"])
        if done is None:
            return turn_line("I could not cancel the appointment.", done=True, outcome="FAILURE")
        return turn_line(f"Your appointment on {self.appointment['starts_at']} is cancelled.", done=True,
                         outcome="SUCCESS")


CAREFUL = os.environ.get("CLINIC_AGENT", "careful") != "hasty"


def main():
    """Command mode: the conversation on stdin and stdout."""
    first = json.loads(sys.stdin.readline())
    desk = Desk(careful=CAREFUL)
    log("mode", "careful" if CAREFUL else "hasty", "max_turns", first["conversation"]["max_turns"])
    message = first["message"]
    while message is not None:
        line = desk.turn(message)
        print(json.dumps(line), flush=True)
        if line.get("done"):
            break
        message = next_message()


def serve():
    """Server mode: one POST per turn on 127.0.0.1:$PORT; a desk per conversation id."""
    from http.server import BaseHTTPRequestHandler, HTTPServer

    desks = {}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.end_headers()

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["content-length"])))
            TOOLS["url"] = body["tools_url"]
            conversation = body["conversation"]
            desk = desks.setdefault(conversation["id"], Desk(careful=CAREFUL))
            line = desk.turn(body["message"])
            data = json.dumps(line).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    HTTPServer(("127.0.0.1", int(os.environ["PORT"])), Handler).serve_forever()


if __name__ == "__main__":
    serve() if "--serve" in sys.argv else main()
