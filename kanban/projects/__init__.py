"""Projects and their plugins: creating, renaming and deleting projects (``lifecycle``),
importing and exporting project packages (``packages``), the plugin developer's loop
(``plugin_workflow``, with the ``plugin_skeleton`` folder ``startplugin`` copies), the
plugin-changed events a re-import sends (``plugin_events``), and the boards a user may open
with their plugin files (``boards``)."""
