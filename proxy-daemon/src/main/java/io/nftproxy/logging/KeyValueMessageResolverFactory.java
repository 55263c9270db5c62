package io.nftproxy.logging;

import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.config.plugins.Plugin;
import org.apache.logging.log4j.core.config.plugins.PluginFactory;
import org.apache.logging.log4j.layout.template.json.resolver.EventResolver;
import org.apache.logging.log4j.layout.template.json.resolver.EventResolverContext;
import org.apache.logging.log4j.layout.template.json.resolver.EventResolverFactory;
import org.apache.logging.log4j.layout.template.json.resolver.TemplateResolverConfig;
import org.apache.logging.log4j.layout.template.json.resolver.TemplateResolverFactory;
import org.apache.logging.log4j.layout.template.json.util.JsonWriter;
import org.apache.logging.log4j.message.Message;

import java.util.Map;

/**
 * The JSON layout's {@code "$resolver": "nftproxyMessage"} (nftproxy-log.json): {@code "part": "text"} is the
 * message without its {@code key=value} pairs, {@code "part": "fields"} writes each pair as a field of the event
 * itself ({@link KeyValueMessage}), so {@code jq 'select(.kind == "Service")'} works on nftproxy's JSON logs.
 */
@Plugin(name = "NftproxyMessageResolverFactory", category = TemplateResolverFactory.CATEGORY)
public final class KeyValueMessageResolverFactory implements EventResolverFactory {
    private static final KeyValueMessageResolverFactory INSTANCE = new KeyValueMessageResolverFactory();

    private KeyValueMessageResolverFactory() {}

    @PluginFactory
    public static KeyValueMessageResolverFactory getInstance() { return INSTANCE; }

    @Override public String getName() { return "nftproxyMessage"; }

    @Override public EventResolver create(EventResolverContext context, TemplateResolverConfig config) {
        String part = config.getString("part");
        if ("text".equals(part)) return new Text();
        if ("fields".equals(part)) return new Fields();
        throw new IllegalArgumentException("nftproxyMessage: part must be text or fields, not " + part);
    }

    static KeyValueMessage split(LogEvent event) {
        Message m = event.getMessage();
        if (m == null) return new KeyValueMessage("", Map.of());
        Object[] params = m.getParameters();
        // A message without placeholders (a plain string) has nothing to split: its formatted text is the message.
        if (params == null || params.length == 0) return new KeyValueMessage(m.getFormattedMessage(), Map.of());
        return KeyValueMessage.of(m.getFormat(), params, event.getThrown() != null);
    }

    private static final class Text implements EventResolver {
        @Override public void resolve(LogEvent event, JsonWriter json) { json.writeString(split(event).text()); }
    }

    /** Flattening: the pairs go into the event object itself, not under a key of their own. */
    private static final class Fields implements EventResolver {
        @Override public boolean isFlattening() { return true; }

        @Override public boolean isResolvable(LogEvent event) { return !split(event).fields().isEmpty(); }

        @Override public void resolve(LogEvent event, JsonWriter json) { resolve(event, json, false); }

        @Override public void resolve(LogEvent event, JsonWriter json, boolean succeedingEntry) {
            boolean separator = succeedingEntry;
            for (Map.Entry<String, String> e : split(event).fields().entrySet()) {
                if (separator) json.writeSeparator();
                json.writeObjectKey(e.getKey());
                json.writeString(e.getValue());
                separator = true;
            }
        }
    }
}
