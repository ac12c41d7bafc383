/** The longest text made into a QR code: an `otpauth://` URI is far shorter; the code stays small. */
export const QR_MAX_TEXT = 512

/**
 * A QR code of `text` (ASCII: a URI, percent-encoded) at error correction level M, as an SVG
 * path of its dark modules, one unit each, inside a square of `size` units (the code and Gitea's
 * quiet zone of four modules around it): `<path d={path}>` in a `viewBox="0 0 size size"` on a
 * light background. Linear in the code's modules (at most 57 a side for QR_MAX_TEXT). The encoder
 * (qrcode-generator) is imported on first use: only an enrollment shows a QR code.
 */
export async function qrCodePath(text: string): Promise<{ size: number; path: string }> {
  if (text.length > QR_MAX_TEXT || !/^[\x20-\x7e]*$/.test(text)) throw new Error('a QR code is made of printable ASCII text of at most 512 characters')
  const { default: qrcode } = await import('qrcode-generator')
  const code = qrcode(0, 'M')
  code.addData(text, 'Byte')
  code.make()
  const count = code.getModuleCount()
  const quiet = 4
  const parts: string[] = []
  for (let row = 0; row < count; row++) {
    // A run of dark modules in a row is one rectangle.
    for (let col = 0; col < count; ) {
      if (!code.isDark(row, col)) {
        col++
        continue
      }
      const start = col
      while (col < count && code.isDark(row, col)) col++
      parts.push(`M${start + quiet} ${row + quiet}h${col - start}v1h${start - col}z`)
    }
  }
  return { size: count + 2 * quiet, path: parts.join('') }
}
