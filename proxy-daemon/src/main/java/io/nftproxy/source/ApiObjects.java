package io.nftproxy.source;

import io.nftproxy.cluster.EndpointSliceObject;
import io.nftproxy.cluster.NodeObject;
import io.nftproxy.cluster.ServiceCidrObject;
import io.nftproxy.cluster.ServiceObject;
import tools.jackson.databind.JsonNode;

/**
 * Decodes API objects delivered as JSON (by a watch, through the client's own serialisation) with the same code
 * that reads manifest files, so both sources map fields, check types and report problems identically.
 */
public final class ApiObjects {
    private ApiObjects() {}

    /** @throws ManifestFormatException naming the field whose type is wrong */
    public static ServiceObject service(JsonNode json) { return ApiObjectDecoder.service(new ApiNode(json, "")); }

    public static EndpointSliceObject endpointSlice(JsonNode json) { return ApiObjectDecoder.endpointSlice(new ApiNode(json, "")); }

    public static NodeObject node(JsonNode json) { return ApiObjectDecoder.node(new ApiNode(json, "")); }

    public static ServiceCidrObject serviceCidr(JsonNode json) { return ApiObjectDecoder.serviceCidr(new ApiNode(json, "")); }
}
