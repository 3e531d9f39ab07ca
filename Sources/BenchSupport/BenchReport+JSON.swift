import Foundation

extension BenchReport {
    /// The report as pretty-printed JSON with sorted keys; a figure that is not a finite number
    /// is written as the string "nan", "inf" or "-inf", and ``decode(from:)`` reads it back.
    public func json() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        do {
            return String(decoding: try encoder.encode(self), as: UTF8.self)
        } catch {
            // Numbers (finite or not), strings and flags always encode; this names the impossible.
            return "{\"error\": \"the report could not be encoded: \(String(describing: error).replacingOccurrences(of: "\"", with: "'"))\"}"
        }
    }

    /// Reads a report written by ``json()``.
    /// - Parameter data: The JSON, as `idp-bench --format json` writes it.
    /// - Returns: The report.
    /// - Throws: ``BenchReportError`` naming the problem: not JSON, another schema, a missing key.
    public static func decode(from data: Data) throws(BenchReportError) -> BenchReport {
        struct SchemaOnly: Decodable { let schema: String? }
        guard let probe = try? JSONDecoder().decode(SchemaOnly.self, from: data) else {
            throw BenchReportError("not an idp-bench JSON report (not a JSON object)")
        }
        guard probe.schema == currentSchema else {
            throw BenchReportError("schema is '\(probe.schema ?? "missing")', expected '\(currentSchema)'")
        }
        do {
            let decoder = JSONDecoder()
            decoder.nonConformingFloatDecodingStrategy = .convertFromString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
            return try decoder.decode(BenchReport.self, from: data)
        } catch let DecodingError.keyNotFound(key, context) {
            throw BenchReportError("missing key '\(key.stringValue)' at \(context.codingPath.map(\.stringValue).joined(separator: "."))")
        } catch {
            throw BenchReportError("unreadable report: \(error)")
        }
    }
}

/// Why a report could not be read.
public struct BenchReportError: Error, CustomStringConvertible, Equatable {
    /// What is wrong with the input.
    public let description: String
    /// An error that says `description`.
    /// - Parameter description: What is wrong with the input.
    public init(_ description: String) { self.description = description }
}
