/** jest.config.js's globalTeardown: removes the folder test/support/temp-root.js made. */
module.exports = require('./temp-root').teardown;
