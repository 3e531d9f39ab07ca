// What a provider always uses with this module: the IdpSdk's provider protocol and its types
// (IdpSdk), and the house lock and the clocks (IdpPrimitives). Importing CredentialProviders brings
// both modules.
@_exported import IdpPrimitives
@_exported import IdpSdk
