// Package records holds the records of sdkpp's public surface: value snapshots that the game and
// the SDK pass each other (ClientResult, AuthorizationArgs, Activity, GuildChannel, ...), and the
// enums they and the rest of the surface use. Their structs, constructors, Clone, getters and
// setters, and the enums, are generated from api/sdkpp.api (records_gen.go, enums_gen.go); this
// package writes by hand what the description marks so (the constructors that set defaults, the
// records that hold more than their properties) and the conversions between the records and
// their wire forms. core re-exports every record and enum under the same name (type aliases), so
// the facade and capi name them as core's.
//
// Records are not safe for concurrent use; the C ABI serializes calls on one record.
package records
