/*
 * fake_notifyd ADDRESS [--hang]: a stand-in notification server on a
 * private bus. libnotify asks GetServerInformation before any Notify and
 * gives up without one, so a bus with nobody on org.freedesktop.Notifications
 * never carries a Notify; this server answers it. Prints "ready" once it
 * owns the name and "notify: BODY" per Notify. With --hang it answers
 * GetServerInformation but never Notify, like a server that is stuck.
 *
 * A test fixture, so GLib style inside: it is not part of the console.
 */

#include <stdio.h>
#include <string.h>

#include <gio/gio.h>

static const char introspection[] =
	"<node><interface name='org.freedesktop.Notifications'>"
	"<method name='GetServerInformation'>"
	"<arg type='s' direction='out'/><arg type='s' direction='out'/>"
	"<arg type='s' direction='out'/><arg type='s' direction='out'/></method>"
	"<method name='GetCapabilities'><arg type='as' direction='out'/></method>"
	"<method name='Notify'>"
	"<arg type='s' direction='in'/><arg type='u' direction='in'/>"
	"<arg type='s' direction='in'/><arg type='s' direction='in'/>"
	"<arg type='s' direction='in'/><arg type='as' direction='in'/>"
	"<arg type='a{sv}' direction='in'/><arg type='i' direction='in'/>"
	"<arg type='u' direction='out'/></method>"
	"<method name='CloseNotification'><arg type='u' direction='in'/></method>"
	"</interface></node>";

static gboolean hang;
static guint32 next_id;
static GSList *held;	/* the calls a hung server never answers */

static void
on_notify(GDBusMethodInvocation *inv, GVariant *params)
{
	const char *body = NULL;

	g_variant_get_child(params, 4, "&s", &body);
	printf("notify: %s\n", body ? body : "");
	fflush(stdout);
	if (hang) {
		held = g_slist_prepend(held, g_object_ref(inv));
		return;
	}
	g_dbus_method_invocation_return_value(inv, g_variant_new("(u)", ++next_id));
}

static void
on_call(GDBusConnection *c, const char *sender, const char *path, const char *iface,
	const char *method, GVariant *params, GDBusMethodInvocation *inv, gpointer data)
{
	const char *caps[] = { "body", NULL };

	(void)c; (void)sender; (void)path; (void)iface; (void)data;
	if (strcmp(method, "GetServerInformation") == 0)
		g_dbus_method_invocation_return_value(inv,
			g_variant_new("(ssss)", "airlock-fake", "airlock", "0", "1.2"));
	else if (strcmp(method, "GetCapabilities") == 0)
		g_dbus_method_invocation_return_value(inv,
			g_variant_new("(^as)", (char **)caps));
	else if (strcmp(method, "Notify") == 0)
		on_notify(inv, params);
	else
		g_dbus_method_invocation_return_value(inv, NULL);
}

static void
on_name(GDBusConnection *c, const char *name, gpointer data)
{
	(void)c; (void)name; (void)data;
	printf("ready\n");
	fflush(stdout);
}

static void
on_lost(GDBusConnection *c, const char *name, gpointer loop)
{
	(void)c; (void)name;
	fprintf(stderr, "fake_notifyd: could not own the name\n");
	g_main_loop_quit(loop);
}

int
main(int argc, char **argv)
{
	static const GDBusInterfaceVTable vtable = { .method_call = on_call };
	GDBusConnection *c;
	GDBusNodeInfo *node;
	GError *err = NULL;
	GMainLoop *loop;

	if (argc < 2 || (argc == 3 && strcmp(argv[2], "--hang") != 0) || argc > 3) {
		fprintf(stderr, "usage: fake_notifyd ADDRESS [--hang]\n");
		return 2;
	}
	hang = argc == 3;
	c = g_dbus_connection_new_for_address_sync(argv[1],
		G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT |
		G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION, NULL, NULL, &err);
	if (!c) {
		fprintf(stderr, "fake_notifyd: %s\n", err->message);
		return 1;
	}
	loop = g_main_loop_new(NULL, FALSE);
	node = g_dbus_node_info_new_for_xml(introspection, NULL);
	g_dbus_connection_register_object(c, "/org/freedesktop/Notifications",
		node->interfaces[0], &vtable, NULL, NULL, NULL);
	g_bus_own_name_on_connection(c, "org.freedesktop.Notifications",
		G_BUS_NAME_OWNER_FLAGS_NONE, on_name, on_lost, loop, NULL);
	g_main_loop_run(loop);
	return 1;
}
