"""A notification service for tests: owns org.freedesktop.Notifications on the session bus, answers every Notify
as a real daemon does (a new id) and appends one JSON line per call, {"summary", "body"}, to the file named by argv[1].
Prints "ready" once it owns the name. Run it with the desktop's environment (its DBUS_SESSION_BUS_ADDRESS)."""

from __future__ import annotations

import json
import sys

from gi.repository import Gio, GLib

XML = """<node><interface name="org.freedesktop.Notifications">
<method name="Notify"><arg type="s" direction="in"/><arg type="u" direction="in"/><arg type="s" direction="in"/>
<arg type="s" direction="in"/><arg type="s" direction="in"/><arg type="as" direction="in"/>
<arg type="a{sv}" direction="in"/><arg type="i" direction="in"/><arg type="u" direction="out"/></method>
<method name="CloseNotification"><arg type="u" direction="in"/></method>
<method name="GetCapabilities"><arg type="as" direction="out"/></method>
<method name="GetServerInformation"><arg type="s" direction="out"/><arg type="s" direction="out"/>
<arg type="s" direction="out"/><arg type="s" direction="out"/></method>
</interface></node>"""


def main() -> None:
    out = sys.argv[1]
    count = [0]
    node = Gio.DBusNodeInfo.new_for_xml(XML)

    def call(conn, sender, path, iface, method, params, invocation):
        if method == "Notify":
            _app, _id, _icon, summary, body, *_ = params.unpack()
            with open(out, "a", encoding="utf-8") as fh:
                fh.write(json.dumps({"summary": summary, "body": body}) + "\n")
            count[0] += 1
            invocation.return_value(GLib.Variant("(u)", (count[0],)))
        elif method == "GetCapabilities":
            invocation.return_value(GLib.Variant("(as)", (["body"],)))
        elif method == "GetServerInformation":
            invocation.return_value(GLib.Variant("(ssss)", ("recorder", "tests", "1", "1.2")))
        else:
            invocation.return_value(None)

    def acquired(conn, name):
        print("ready", flush=True)

    def bus(conn, name):
        conn.register_object("/org/freedesktop/Notifications", node.interfaces[0], call, None, None)

    Gio.bus_own_name(
        Gio.BusType.SESSION,
        "org.freedesktop.Notifications",
        Gio.BusNameOwnerFlags.REPLACE,
        bus,
        acquired,
        lambda *_: sys.exit(1),
    )
    GLib.MainLoop().run()


if __name__ == "__main__":
    main()
