// swift-tools-version: 6.0
// IdpHarness: the documented IdpSdk / MC-SDK flows, an in-process IDP, and the tools to stress and
// benchmark credential providers. No package dependencies: the toolchain only.
import PackageDescription

let package = Package(
    name: "IdpHarness",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .library(name: "IdpPrimitives", targets: ["IdpPrimitives"]),
        .library(name: "IdpWireFormats", targets: ["IdpWireFormats"]),
        .library(name: "IdpServer", targets: ["IdpServer"]),
        .library(name: "IdpSdk", targets: ["IdpSdk"]),
        .library(name: "McSdk", targets: ["McSdk"]),
        .library(name: "CredentialProviders", targets: ["CredentialProviders"]),
        .library(name: "IdpHarness", targets: ["IdpHarness"]),
        .library(name: "BenchSupport", targets: ["BenchSupport"]),
        .library(name: "IdpHarnessTesting", targets: ["IdpHarnessTesting"]),
        .executable(name: "idp-bench", targets: ["IdpBench"]),
    ],
    targets: [
        // Product modules, lowest first.
        .target(name: "IdpPrimitives"),
        .target(name: "IdpWireFormats", dependencies: ["IdpPrimitives"]),
        .target(name: "IdpServer", dependencies: ["IdpPrimitives", "IdpWireFormats"]),
        .target(name: "IdpSdk", dependencies: ["IdpPrimitives", "IdpWireFormats"]),
        .target(name: "McSdk", dependencies: ["IdpPrimitives", "IdpWireFormats", "IdpSdk"]),
        .target(name: "CredentialProviders", dependencies: ["IdpPrimitives", "IdpSdk"]),
        .target(name: "BenchSupport", dependencies: ["IdpPrimitives", "IdpWireFormats"]),
        // C only to define ThreadSanitizer's report hook; no dependency.
        .target(name: "ThreadSanitizerHook"),
        .target(name: "IdpHarness", dependencies: ["IdpPrimitives", "IdpWireFormats", "IdpServer", "IdpSdk", "McSdk", "CredentialProviders",
                                                   "ThreadSanitizerHook", "BenchSupport"]),
        // The kit's report in a Swift Testing test: its own module, so that nothing else links Testing.
        .target(name: "IdpHarnessTesting", dependencies: ["IdpHarness"]),

        // Executables.
        .executableTarget(
            name: "IdpBench",
            dependencies: ["IdpPrimitives", "IdpWireFormats", "IdpServer", "IdpSdk", "McSdk", "CredentialProviders", "BenchSupport", "IdpHarness"],
            path: "Benchmarks/IdpBench"
        ),
        // The recipe for measuring your own provider (README, "Measure it").
        .executableTarget(name: "MeasureProviderExample", dependencies: ["IdpHarness"], path: "Benchmarks/MeasureProvider"),

        // The documents' Swift, as printed, each in a client target of its own (the samples reuse
        // the names IdpHandler, getAuthorizationCode, …), in the language mode the IdpSdk article
        // "Getting started with the documents' samples" states.
        .target(name: "Seed000WebViewSample", dependencies: ["McSdk"], path: "Tests/DocumentSamples/Seed000WebView"),
        .target(name: "Seed001ActivationSample", dependencies: ["IdpSdk", "McSdk"], path: "Tests/DocumentSamples/Seed001Activation"),
        .target(name: "Seed002LoginSample", dependencies: ["IdpSdk", "McSdk"], path: "Tests/DocumentSamples/Seed002Login"),
        .target(name: "Seed003AuthenticationResultSample", dependencies: ["IdpPrimitives", "IdpWireFormats", "IdpSdk"],
                path: "Tests/DocumentSamples/Seed003AuthenticationResult"),
        .target(name: "VendorIdpSdkPagesSample", dependencies: ["IdpPrimitives", "IdpWireFormats", "IdpSdk", "McSdk"],
                path: "Tests/DocumentSamples/VendorIdpSdkPages"),
        .target(name: "VendorMcPagesSwift6Sample", dependencies: ["IdpPrimitives", "McSdk"], path: "Tests/DocumentSamples/VendorMcPagesSwift6"),
        // The invalid-state page's adapter hands its own non-Sendable completion parameter to
        // `DispatchQueue.async`, whose closure Swift 6 requires to be @Sendable: it compiles as
        // printed only in Swift 5 mode, against any SDK.
        .target(name: "VendorMcPagesSample", dependencies: ["McSdk"], path: "Tests/DocumentSamples/VendorMcPages",
                swiftSettings: [.swiftLanguageMode(.v5)]),

        // Tests: one target per module, each depending on what it tests and the helpers it uses:
        // TestSupport (gates, OS-thread runners, polling with a deadline) needs only
        // IdpPrimitives; StackTestSupport (an in-process IDP, SDK and MC, providers, transports,
        // a scripted web view) needs the stack.
        .target(name: "TestSupport", dependencies: ["IdpPrimitives"], path: "Tests/TestSupport"),
        .target(name: "StackTestSupport", dependencies: ["IdpPrimitives", "IdpWireFormats", "IdpServer", "IdpSdk", "McSdk", "TestSupport"],
                path: "Tests/StackTestSupport"),
        .testTarget(name: "IdpPrimitivesTests", dependencies: ["IdpPrimitives", "TestSupport"]),
        .testTarget(name: "IdpWireFormatsTests", dependencies: ["IdpPrimitives", "IdpWireFormats", "TestSupport"]),
        .testTarget(name: "IdpServerTests", dependencies: ["IdpPrimitives", "IdpWireFormats", "IdpServer", "TestSupport"]),
        .testTarget(name: "IdpSdkTests", dependencies: ["IdpPrimitives", "IdpWireFormats", "IdpServer", "IdpSdk", "McSdk", "TestSupport", "StackTestSupport"]),
        .testTarget(name: "McSdkTests", dependencies: ["IdpPrimitives", "IdpWireFormats", "IdpServer", "IdpSdk", "McSdk", "TestSupport", "StackTestSupport",
                                                       "Seed000WebViewSample", "Seed002LoginSample"]),
        .testTarget(name: "CredentialProvidersTests", dependencies: ["IdpPrimitives", "IdpWireFormats", "IdpServer", "IdpSdk", "CredentialProviders",
                                                                     "TestSupport"]),
        .testTarget(name: "IdpHarnessTests", dependencies: ["IdpPrimitives", "IdpWireFormats", "IdpServer", "IdpSdk", "CredentialProviders", "IdpHarness",
                                                            "IdpHarnessTesting", "TestSupport"]),
        .testTarget(name: "BenchSupportTests", dependencies: ["BenchSupport", "IdpPrimitives"]),
        .testTarget(
            name: "DocumentSampleTests",
            dependencies: ["IdpPrimitives", "IdpWireFormats", "IdpServer", "IdpSdk", "McSdk", "TestSupport", "Seed001ActivationSample", "Seed002LoginSample",
                           "Seed003AuthenticationResultSample", "VendorIdpSdkPagesSample", "VendorMcPagesSample", "VendorMcPagesSwift6Sample"]
        ),
        // The README's Swift blocks, verbatim, compiled and run, with the products its Package.swift snippet names.
        .testTarget(name: "ReadmeTests", dependencies: ["IdpSdk", "McSdk", "IdpServer", "CredentialProviders", "IdpHarness"]),
    ],
    swiftLanguageModes: [.v6]
)
