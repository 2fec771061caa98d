/**
 * The export targets and FIS platforms the cloud tools' schemas list: a leaf module, so the MCP
 * server can describe those tools without loading the FIS catalog and the exporters.
 */

export const EXPORT_TARGETS = ['fis', 'chaos-mesh', 'k6'] as const;
export const FIS_PLATFORMS = ['ecs', 'eks'] as const;
