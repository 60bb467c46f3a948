// Koa 2, installed beside Koa 3 under another name so the tests run both; its API is Koa 3's
// for everything the guard uses (ctx.req, ctx.res, ctx.state, ctx.respond, ctx.status).
declare module 'koa2' {
  import Koa from 'koa';
  export default Koa;
}
