#!/usr/bin/env python3
"""A clinic front-desk agent that talks with the patient, in Python with the standard library only.

Written from docs/agent-protocol.md (conversations): the first stdin line is {"message", "context",
"conversation": {"turn", "max_turns"}}; each turn is one JSON line on stdout with a "reply" (and
"done": true when the agent ends the conversation); the harness answers with {"message", "turn"} on
stdin, or closes stdin when the conversation is over. Tools over $STATEGATE_TOOLS_URL. Logs to stderr.

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


def call(tool, **args):
    """POST $STATEGATE_TOOLS_URL/tools/NAME; the result, or None on an error reply."""
    url = os.environ["STATEGATE_TOOLS_URL"].rstrip("/") + "/tools/" + tool
    req = urllib.request.Request(url, data=json.dumps(args).encode(), method="POST",
                                 headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=10) as res:
            return json.loads(res.read())["result"]
    except urllib.error.HTTPError as err:
        log(tool, "failed:", err.code, err.read()[:200])
        return None


def say(reply, done=False, outcome=None):
    line = {"reply": reply}
    if done:
        line["done"] = True
    if outcome:
        line["outcome"] = outcome
    print(json.dumps(line), flush=True)


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
        """Handles one user turn and says one agent turn; returns False when the agent ended."""
        if self.stage == "start":
            match = NAME.search(message)
            if not match:
                say("May I have your full name, please?")
                return True
            self.name = match.group(1)
            self.wants_cancel = "cancel" in message.lower()
            patients = call("find_patients", name=self.name) or []
            if not patients:
                say(f"I could not find a patient named {self.name}.", done=True, outcome="FAILURE")
                return False
            if len(patients) > 1 and self.careful:
                self.stage = "dob"
                say(f"We have more than one patient named {self.name}. What is your date of birth?")
                return True
            return self.found(patients[0])
        if self.stage == "dob":
            match = DATE.search(message)
            if not match:
                say("Sorry, I need your date of birth as YYYY-MM-DD. What is your date of birth?")
                return True
            patients = call("find_patients", name=self.name, dob=match.group(1)) or []
            if len(patients) != 1:
                say("I could not match that date of birth. Please call the front desk.", done=True,
                    outcome="ESCALATED")
                return False
            return self.found(patients[0])
        if self.stage == "confirm":
            if YES.search(message):
                return self.cancel()
            say("All right, I have not cancelled anything.", done=True, outcome="SUCCESS")
            return False
        say("Is there anything else?")
        return True

    def found(self, patient):
        appointments = call("list_appointments", patient_id=patient["id"]) or []
        if not appointments:
            say("You have no booked appointment.", done=True, outcome="SUCCESS")
            return False
        self.appointment = appointments[0]
        when = self.appointment["starts_at"]
        if not self.wants_cancel:
            self.stage = "told"
            say(f"Your next appointment is on {when}.", outcome="SUCCESS")
            return True
        if self.careful:
            self.stage = "confirm"
            say(f"I found your appointment on {when}. Shall I go ahead and cancel it?")
            return True
        return self.cancel()

    def cancel(self):
        done = call("cancel_appointment", appointment_id=self.appointment["id"])
        if done is None:
            say("I could not cancel the appointment.", done=True, outcome="FAILURE")
        else:
            say(f"Your appointment on {self.appointment['starts_at']} is cancelled.", done=True,
                outcome="SUCCESS")
        return False


def main():
    first = json.loads(sys.stdin.readline())
    desk = Desk(careful=os.environ.get("CLINIC_AGENT", "careful") != "hasty")
    log("mode", "careful" if desk.careful else "hasty", "max_turns", first["conversation"]["max_turns"])
    message = first["message"]
    while message is not None:
        if not desk.turn(message):
            break
        message = next_message()


if __name__ == "__main__":
    main()
