// What a test of a provider always uses with the kit, the stress and the benchmark: the IdpSdk's
// provider protocol and its types (IdpSdk), the house lock and the clocks (IdpPrimitives), and the
// report `ProviderBenchmark` returns with its rendering (BenchSupport). Importing IdpHarness brings
// the three modules.
@_exported import BenchSupport
@_exported import IdpPrimitives
@_exported import IdpSdk
