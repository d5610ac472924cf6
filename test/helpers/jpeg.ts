/**
 * A real 1x1 grey baseline JPEG, assembled from its segments so the bytes are
 * explainable: quantisation table of ones, one 8-bit grey component, Huffman
 * tables with a single one-bit code each (DC category 0, AC end-of-block), and
 * one entropy-coded byte holding "0" (DC difference 0) "0" (EOB) padded with ones.
 */
const segments = [
  'ffd8', // start of image
  'ffdb0043' + '00' + '01'.repeat(64), // quantisation table 0
  'ffc0000b' + '08' + '0001' + '0001' + '01' + '011100', // baseline frame: 8 bit, 1x1, one component (id 1, 1x1 sampling, table 0)
  'ffc40014' + '00' + '01' + '00'.repeat(15) + '00', // DC Huffman table 0: one code of length 1 -> category 0
  'ffc40014' + '10' + '01' + '00'.repeat(15) + '00', // AC Huffman table 0: one code of length 1 -> end of block
  'ffda0008' + '01' + '0100' + '00' + '3f' + '00', // start of scan: component 1, tables 0/0, spectral 0..63
  '3f', // entropy-coded data
  'ffd9', // end of image
];

export const JPEG_1x1 = Buffer.from(segments.join(''), 'hex');
